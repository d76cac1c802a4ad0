SET client_min_messages = warning;
-- The two layouts for one Parse class, each with 100,000 objects (ids o000000001 ...; n uniform in [0, 1,000,000)).
-- (a) jsonb: one document per object, as Roost keeps objects in SQLite today.
-- (b) typed: one column per field, as parse-server's PostgreSQL adapter does.
DROP TABLE IF EXISTS doc_jsonb, doc_typed;
CREATE TABLE doc_jsonb (id text PRIMARY KEY, created timestamptz NOT NULL, data jsonb NOT NULL);
CREATE TABLE doc_typed (id text PRIMARY KEY, created timestamptz NOT NULL, n float8, s text, a text, b boolean);
SELECT setseed(0.21);
CREATE TEMP TABLE seed AS
    SELECT i, 'o' || lpad(i::text, 9, '0') AS id, floor(random() * 1000000) AS n, md5(i::text) AS s
    FROM generate_series(1, :rows) AS i;
INSERT INTO doc_jsonb SELECT id, now(), jsonb_build_object('n', n, 's', 'player ' || s, 'a', 'team ' || (i % 17), 'b', i % 2 = 0)
    FROM seed;
INSERT INTO doc_typed SELECT id, now(), n, 'player ' || s, 'team ' || (i % 17), i % 2 = 0 FROM seed;
VACUUM ANALYZE doc_jsonb;
VACUUM ANALYZE doc_typed;
