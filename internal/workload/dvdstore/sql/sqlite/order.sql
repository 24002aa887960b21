-- A purchase writes: it takes the write lock up front.
-- name: begin_write
BEGIN IMMEDIATE
