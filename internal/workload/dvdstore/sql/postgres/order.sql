-- name: begin_write
BEGIN ISOLATION LEVEL READ COMMITTED

-- The searches by actor and title are full-text searches, which the GIN
-- indexes on to_tsvector('simple', ...) serve.
-- name: browse_actor
SELECT prod_id, title, actor, price FROM ds_products
WHERE to_tsvector('simple', actor) @@ plainto_tsquery('simple', $1) LIMIT $2

-- name: browse_title
SELECT prod_id, title, actor, price FROM ds_products
WHERE to_tsvector('simple', title) @@ plainto_tsquery('simple', $1) LIMIT $2

-- name: call:login
SELECT customerid, title, actor, related FROM ds_login($1, $2)

-- name: call:new_customer
SELECT ds_new_customer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)

-- name: call:browse_category
SELECT prod_id, title, actor, price FROM ds_browse_category($2, $1)

-- name: call:browse_actor
SELECT prod_id, title, actor, price FROM ds_browse_actor($2, $1)

-- name: call:browse_title
SELECT prod_id, title, actor, price FROM ds_browse_title($2, $1)

-- name: call:purchase
SELECT ds_purchase($1, $2, $3, $4, $5, $6)
