-- The index a declared index on Number field n becomes in each layout.
CREATE INDEX doc_jsonb_n ON doc_jsonb (((data->>'n')::float8));
CREATE INDEX doc_typed_n ON doc_typed (n);
ANALYZE doc_jsonb;
ANALYZE doc_typed;
