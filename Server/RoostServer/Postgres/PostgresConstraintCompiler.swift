import RoostCore

/// `PostgresQueryCompiler` as `ObjectStore` asks for it (`ConstraintCompiling`): fragments with `?` marks and
/// `SQLValue`s, which `PostgresConnection`'s `SQLQuerying` numbers again as `$1, $2, ...`.
struct PostgresConstraintCompiler: ConstraintCompiling {
    let compiler: PostgresQueryCompiler

    func compile(_ constraint: QueryConstraint) throws -> SQLFragment {
        Self.shared(try compiler.compile(constraint))
    }

    func orderBy(_ keys: [SortKey], constraint: QueryConstraint) -> SQLFragment {
        Self.shared(compiler.orderBy(keys, constraint: constraint))
    }

    func nearestFirst(_ constraint: QueryConstraint) -> SQLFragment? {
        compiler.nearestFirst(constraint).map(Self.shared)
    }

    /// The fragment with `?` for each parameter mark. The compiler's SQL has no `?` of its own outside string
    /// literals (no jsonb `?` operators), so the marks are the only ones the placeholder translation sees.
    static func shared(_ fragment: PostgresFragment) -> SQLFragment {
        SQLFragment(sql: PostgresFragment.replacing(PostgresFragment.mark, with: UInt8(ascii: "?"), in: fragment.sql),
                    arguments: fragment.parameters.map(sqlValue))
    }

    private static func sqlValue(_ value: PostgresValue) -> SQLValue {
        switch value {
        case .null: .null
        case .text(let text): .text(text)
        case .int(let number): .integer(number)
        case .double(let number): .real(number)
        // Sent untyped: PostgreSQL reads 'true' as the boolean its context needs.
        case .bool(let flag): .text(flag ? "true" : "false")
        case .bytes(let bytes): .text(String(decoding: bytes, as: UTF8.self))
        }
    }
}
