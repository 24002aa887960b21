-- name: meta_read
SELECT layout, customers, products, orders_per_month, seed FROM dbrig_dvdstore
