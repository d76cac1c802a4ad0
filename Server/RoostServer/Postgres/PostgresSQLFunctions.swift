/// SQLite functions the stores' SQL calls, defined on PostgreSQL so that the same text runs on both (migration 1 of
/// `PostgresSchema`).
///
/// Each is a one-expression `LANGUAGE sql IMMUTABLE` function, which the planner inlines
/// (https://wiki.postgresql.org/wiki/Inlining_of_SQL_functions): `json_extract(data, '$.username')` is planned as
/// `data #>> '{username}'`, so an expression index built on the call answers queries written with it (the
/// `_User` username, email and anonymous-id indexes, `_Role`'s name, `_Installation`'s ids).
///
/// - `json_extract(jsonb, text) → text`: SQLite's `json_extract` for `'$.a.b'` key paths (no `[n]` array steps),
///   answering text. SQLite answers a JSON number as a number; this answers its text, so use it for strings and
///   for the stores' lookups, not to compare or sort numbers (the query compilers have their own expressions).
/// - `json_remove(jsonb, text) → jsonb`: removes the key at a `'$.a.b'` path.
/// - `json_set(jsonb, text, json) → jsonb` and `json(text) → json`: `json_set(data, '$.field', json(?))`
///   (`RelationStore`) sets a key to a JSON value given as text; `jsonb_set` creates the last key of the path only.
///   (From PostgreSQL 17 `json(...)` is SQL's own JSON() constructor, which answers the same.)
/// - `instr(text, text) → integer`: `strpos`. In a condition write `instr(a, b) > 0` (both databases): PostgreSQL
///   does not read an integer as a truth value.
/// - `max(bigint, bigint)`, `min(bigint, bigint)`: SQLite's two-argument scalar `max`/`min` (NULL when either is NULL,
///   unlike `greatest`/`least`); the one-argument aggregates are PostgreSQL's own.
/// - `json_each(text) → (key integer, value text)`: the elements of a JSON array given as text, for
///   `objectId IN (SELECT value FROM json_each(?))`. An untyped parameter picks this over PostgreSQL's
///   `json_each(json)` (the string type is preferred for an unknown argument). Arrays only (SQLite's also walks
///   objects), values as text.
enum PostgresSQLFunctions {
    static let sql = #"""
        CREATE FUNCTION json_extract(document jsonb, path text) RETURNS text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT document #>> string_to_array(substring(path FROM 3), '.') $$;
        CREATE FUNCTION json_remove(document jsonb, path text) RETURNS jsonb
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT document #- string_to_array(substring(path FROM 3), '.') $$;
        CREATE FUNCTION json(value text) RETURNS json
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT value::json $$;
        CREATE FUNCTION json_set(document jsonb, path text, value json) RETURNS jsonb
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT jsonb_set(document, string_to_array(substring(path FROM 3), '.'), value::jsonb) $$;
        CREATE FUNCTION instr(haystack text, needle text) RETURNS integer
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT strpos(haystack, needle) $$;
        CREATE FUNCTION max(a bigint, b bigint) RETURNS bigint
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE greatest(a, b) END $$;
        CREATE FUNCTION min(a bigint, b bigint) RETURNS bigint
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE least(a, b) END $$;
        CREATE FUNCTION json_each(array_text text) RETURNS TABLE (key integer, value text)
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT (ordinality - 1)::integer, element FROM jsonb_array_elements_text(array_text::jsonb)
                  WITH ORDINALITY AS elements (element, ordinality) $$;
        """#
}
