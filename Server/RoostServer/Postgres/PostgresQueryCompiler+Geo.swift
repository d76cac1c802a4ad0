import RoostCore

/// Geo queries in plain SQL (no PostGIS), with `GeoMath`'s formulas: haversine distances in radians, and even-odd
/// ray casting in the latitude/longitude plane with points on an edge inside.
extension PostgresQueryCompiler {
    func geo(_ key: String, _ condition: FieldCondition) -> PostgresFragment {
        let mark = PostgresFragment.parameter
        switch condition {
        case .nearSphere(let point, let maxDistance):
            let distance = geoDistance(key, point)
            guard let maxDistance else { return PostgresFragment(sql: "\(distance.sql) IS NOT NULL", parameters: distance.parameters) }
            return PostgresFragment(sql: "\(distance.sql) <= \(mark)", parameters: distance.parameters + [.double(maxDistance)])
        case .withinBox(let southWest, let northEast):
            let (lat, lng) = coordinates(key)
            return PostgresFragment(
                sql: "\(lat) BETWEEN \(mark) AND \(mark) AND \(lng) BETWEEN \(mark) AND \(mark)",
                parameters: [.double(southWest.latitude), .double(northEast.latitude), .double(southWest.longitude), .double(northEast.longitude)])
        case .withinPolygon(let points):
            return inPolygon(key, points)
        case .polygonContains(let point):
            return polygonContains(key, point)
        case .withinCenterSphere(let center, let radius):
            let distance = geoDistance(key, center)
            return PostgresFragment(sql: "\(distance.sql) <= \(mark)", parameters: distance.parameters + [.double(radius)])
        default:
            return PostgresFragment(sql: "FALSE")
        }
    }

    /// `ORDER BY` for a top-level `$nearSphere` when the query names no order: nearest first.
    func nearestFirst(_ constraint: QueryConstraint) -> PostgresFragment? {
        switch constraint {
        case .field(let key, .nearSphere(let point, _)):
            let distance = geoDistance(key, point)
            return PostgresFragment(sql: distance.sql + " ASC", parameters: distance.parameters)
        case .and(let parts):
            return parts.lazy.compactMap(nearestFirst).first
        default:
            return nil
        }
    }

    /// A GeoPoint's latitude and longitude as float8 (NULL when not numbers, as `roost_geo_distance` reads only numbers).
    private func coordinates(_ key: String) -> (String, String) {
        func number(_ member: String) -> String {
            let value = "(\(json(key)) -> '\(member)')"
            return "(CASE WHEN jsonb_typeof(\(value)) = 'number' THEN (\(value) #>> '{}')::float8 END)"
        }
        return (number("latitude"), number("longitude"))
    }

    /// Haversine distance in radians from the point at `key` (NULL without one), as `GeoMath.distance`.
    private func geoDistance(_ key: String, _ point: GeoPoint) -> PostgresFragment {
        let (lat, lng) = coordinates(key)
        let mark = PostgresFragment.parameter
        let radians = "(pi() / 180)"
        return PostgresFragment(
            sql: """
                (SELECT 2 * atan2(sqrt(haversine.a), sqrt(greatest(0, 1 - haversine.a))) FROM (SELECT \
                sin((there.lat - here.lat) * \(radians) / 2) ^ 2 \
                + cos(here.lat * \(radians)) * cos(there.lat * \(radians)) * sin((there.lng - here.lng) * \(radians) / 2) ^ 2 AS a \
                FROM (SELECT \(lat) AS lat, \(lng) AS lng) AS here, (SELECT \(mark)::float8 AS lat, \(mark)::float8 AS lng) AS there) AS haversine)
                """,
            parameters: [.double(point.latitude), .double(point.longitude)])
    }

    /// `inPolygon`'s test with the roles swapped: the point is the query's, the edges the row's Polygon's (`coordinates`
    /// `[[lat, lng], ...]`, each vertex paired with the one before it, the first with the last).
    private func polygonContains(_ key: String, _ point: GeoPoint) -> PostgresFragment {
        let mark = PostgresFragment.parameter
        let polygon = json(key)
        let coordinates = "(CASE WHEN \(polygon) ->> '__type' = 'Polygon' AND jsonb_typeof(\(polygon) -> 'coordinates') = 'array' "
            + "THEN \(polygon) -> 'coordinates' ELSE '[]'::jsonb END)"
        let edges = """
            (SELECT (v.vertex ->> 0)::float8 AS li, (v.vertex ->> 1)::float8 AS gi, (v.previous ->> 0)::float8 AS lj, \
            (v.previous ->> 1)::float8 AS gj FROM (SELECT c.vertex, lag(c.vertex, 1, \(coordinates) -> -1) OVER (ORDER BY c.n) AS previous \
            FROM jsonb_array_elements(\(coordinates)) WITH ORDINALITY AS c(vertex, n)) AS v)
            """
        return PostgresFragment(sql: Self.contains(point: "(SELECT \(mark)::float8 AS lat, \(mark)::float8 AS lng)", edges: edges),
                                parameters: [.double(point.latitude), .double(point.longitude)])
    }

    /// The point at `key` inside the polygon, edge by edge over a jsonb parameter `[[latI, lngI, latJ, lngJ], ...]` (each
    /// edge from a point to the one before it).
    private func inPolygon(_ key: String, _ points: [GeoPoint]) -> PostgresFragment {
        guard !points.isEmpty else { return PostgresFragment(sql: "FALSE") }
        let edges = points.indices.map { i -> JSON in
            let j = i == 0 ? points.count - 1 : i - 1
            return [.number(points[i].latitude), .number(points[i].longitude), .number(points[j].latitude), .number(points[j].longitude)]
        }
        let (lat, lng) = coordinates(key)
        let edgeRows = """
            (SELECT (edge.value ->> 0)::float8 AS li, (edge.value ->> 1)::float8 AS gi, (edge.value ->> 2)::float8 AS lj, \
            (edge.value ->> 3)::float8 AS gj FROM jsonb_array_elements(\(PostgresFragment.parameter)::jsonb) AS edge(value))
            """
        return PostgresFragment(sql: Self.contains(point: "(SELECT \(lat) AS lat, \(lng) AS lng)", edges: edgeRows,
                                                   where: " WHERE p.lat IS NOT NULL AND p.lng IS NOT NULL"),
                                parameters: [.text(JSON.array(edges).jsonText)])
    }

    /// `GeoMath.contains` in SQL: point `p` (a row of `lat`, `lng`) on some edge of `e` (rows of `li`, `gi`, `lj`, `gj`)
    /// or crossed by an odd number of them. CASE guards the division: PostgreSQL raises on float8 division by zero,
    /// where Swift's `&&` never reaches it.
    private static func contains(point: String, edges: String, where condition: String = "") -> String {
        """
        COALESCE((SELECT bool_or(abs((e.lj - e.li) * (p.lng - e.gi) - (e.gj - e.gi) * (p.lat - e.li)) \
        <= 1e-12 * greatest(1, abs(e.lj - e.li) + abs(e.gj - e.gi)) \
        AND p.lat BETWEEN least(e.li, e.lj) AND greatest(e.li, e.lj) AND p.lng BETWEEN least(e.gi, e.gj) AND greatest(e.gi, e.gj)) \
        OR count(*) FILTER (WHERE CASE WHEN (e.gi > p.lng) <> (e.gj > p.lng) \
        THEN p.lat < (e.lj - e.li) * (p.lng - e.gi) / (e.gj - e.gi) + e.li ELSE FALSE END) % 2 = 1 \
        FROM \(point) AS p, \(edges) AS e\(condition)), FALSE)
        """
    }
}
