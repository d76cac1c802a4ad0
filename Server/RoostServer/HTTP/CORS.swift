/// CORS headers sent on every response, exactly as Parse Server sends them (its `DEFAULT_ALLOWED_HEADERS`).
enum CORS {
    static let headers: [(String, String)] = [
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Allow-Methods", "GET,PUT,POST,DELETE,OPTIONS"),
        ("Access-Control-Allow-Headers",
         "X-Parse-Master-Key, X-Parse-REST-API-Key, X-Parse-Javascript-Key, X-Parse-Application-Id, X-Parse-Client-Version, X-Parse-Session-Token, X-Requested-With, X-Parse-Revocable-Session, X-Parse-Request-Id, Content-Type, Pragma, Cache-Control"),
        ("Access-Control-Expose-Headers", "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id"),
    ]
}
