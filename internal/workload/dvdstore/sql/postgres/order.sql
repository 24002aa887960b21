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
