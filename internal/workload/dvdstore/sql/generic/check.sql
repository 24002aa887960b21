-- Conditions that hold after a build and after any run. Each block
-- returns one number: how many rows break the condition, 0 when it holds.
-- The built counts come from dbrig_dvdstore.

-- Customers only grow (new customers), products and categories never.
-- name: cond:customers at least as built
SELECT CASE WHEN count(*) >= m.customers THEN 0 ELSE m.customers - count(*) END FROM ds_customers, dbrig_dvdstore m GROUP BY m.customers

-- name: cond:products as built
SELECT abs(count(*) - m.products) FROM ds_products, dbrig_dvdstore m GROUP BY m.products

-- name: cond:16 categories
SELECT abs(count(*) - 16) FROM ds_categories

-- name: cond:orders at least as built
SELECT CASE WHEN count(*) >= 12 * m.orders_per_month THEN 0 ELSE 12 * m.orders_per_month - count(*) END
FROM ds_orders, dbrig_dvdstore m GROUP BY m.orders_per_month

-- name: cond:every orderline belongs to an order
SELECT count(*) FROM ds_orderlines ol WHERE NOT EXISTS (SELECT 1 FROM ds_orders o WHERE o.orderid = ol.orderid)

-- name: cond:every order has 1 to 9 lines
SELECT count(*) FROM (SELECT o.orderid FROM ds_orders o LEFT JOIN ds_orderlines ol ON ol.orderid = o.orderid
  GROUP BY o.orderid HAVING count(ol.orderid) NOT BETWEEN 1 AND 9) x

-- cust_hist holds a row for each order line, naming the order's customer.
-- name: cond:cust_hist matches orderlines
SELECT abs((SELECT count(*) FROM ds_cust_hist) - (SELECT count(*) FROM ds_orderlines))
  + (SELECT count(*) FROM ds_orderlines ol JOIN ds_orders o ON o.orderid = ol.orderid
     WHERE NOT EXISTS (SELECT 1 FROM ds_cust_hist h
                       WHERE h.orderid = ol.orderid AND h.prod_id = ol.prod_id AND h.customerid = o.customerid))

-- name: cond:inventory never negative
SELECT count(*) FROM ds_inventory WHERE quan_in_stock < 0

-- name: cond:sales are the quantities ordered
SELECT count(*) FROM ds_inventory i
LEFT JOIN (SELECT prod_id, sum(quantity) AS q FROM ds_orderlines GROUP BY prod_id) s ON s.prod_id = i.prod_id
WHERE i.sales <> coalesce(s.q, 0)
