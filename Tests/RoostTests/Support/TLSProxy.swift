import Foundation
import RoostTestSupport

/// A throwaway certificate authority (made with the `openssl` CLI) and the server certificates it signs.
final class TestCertificateAuthority: @unchecked Sendable {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-tls-\(UUID().uuidString)")
    var certificate: String { directory.appendingPathComponent("ca.pem").path }
    /// The system CA bundle plus this CA: what a device that trusts it has as its system store.
    var systemBundleWithCA: String { directory.appendingPathComponent("bundle.pem").path }

    init() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                    "-subj", "/CN=Roost test CA", "-keyout", path("ca.key"), "-out", certificate)
        let system = try Data(contentsOf: URL(fileURLWithPath: "/etc/ssl/certs/ca-certificates.crt"))
        try (system + Data(contentsOf: URL(fileURLWithPath: certificate))).write(to: URL(fileURLWithPath: systemBundleWithCA))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// A certificate and key for `name` (a DNS name), signed by this CA: (certificate path, key path).
    func issue(for name: String) throws -> (certificate: String, key: String) {
        let base = "server-\(UUID().uuidString)"
        try openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=\(name)",
                    "-keyout", path(base + ".key"), "-out", path(base + ".csr"))
        try Data("subjectAltName=DNS:\(name)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n".utf8)
            .write(to: URL(fileURLWithPath: path(base + ".ext")))
        try openssl("x509", "-req", "-in", path(base + ".csr"), "-CA", certificate, "-CAkey", path("ca.key"), "-CAcreateserial",
                    "-days", "2", "-extfile", path(base + ".ext"), "-out", path(base + ".pem"))
        return (path(base + ".pem"), path(base + ".key"))
    }

    /// Runs `executable arguments` as a process whose system CA store (/etc/ssl/certs/ca-certificates.crt, which
    /// libcurl for REST and OpenSSL's default paths for LiveQuery both read) includes this CA: a private mount
    /// namespace (`unshare`) with the bundle bind-mounted over the system's. Nothing outside that process changes.
    func trusting(_ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        ("/usr/bin/unshare", ["--user", "--map-root-user", "--mount", "/bin/sh", "-c",
                              "mount --bind \"$0\" /etc/ssl/certs/ca-certificates.crt && exec \"$@\"",
                              systemBundleWithCA, executable] + arguments)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func openssl(_ arguments: String...) throws {
        let result = try ChildProcess.run("/usr/bin/openssl", arguments)
        guard result.status == 0 else { throw ServerProcessError.exited("openssl \(arguments.first ?? ""): \(result.output)") }
    }
}

/// Debian's nginx as the TLS terminator in front of a test server: `https://<name>:<port>/parse` (REST and the
/// LiveQuery WebSocket upgrade) proxied to the server's plain HTTP port. The certificate for `name` is served only to
/// clients that ask for `name` by SNI; any other gets one for another name (so a client without SNI fails
/// verification). Runs as a non-daemon child with its own configuration and temporary files; ends with the test.
final class TLSProxy: @unchecked Sendable {
    let port: Int
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-nginx-\(UUID().uuidString)")
    private var process: ChildProcess?

    /// `https://localhost:<port>/parse` (or with another host name that reaches it, e.g. 127.0.0.1).
    func url(host: String = "localhost") -> URL { URL(string: "https://\(host):\(port)/parse")! }

    init(upstreamPort: Int, authority: TestCertificateAuthority, name: String) throws {
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        let certificate = try authority.issue(for: name), other = try authority.issue(for: "without-sni.example")
        var port = try ServerProcess.freePort()
        for attempt in 1... {
            let configuration = directory.appendingPathComponent("nginx.conf")
            let text = Self.configuration(port: port, upstreamPort: upstreamPort, name: name, certificate: certificate, other: other,
                                          directory: directory.path)
            try Data(text.utf8).write(to: configuration)
            let process = try ChildProcess(executable: "/usr/sbin/nginx", arguments: ["-p", directory.path, "-c", configuration.path, "-e", "stderr"],
                                           stderrPath: directory.appendingPathComponent("error.log").path)
            if Self.waitForListener(port: port, process: process) {
                self.process = process
                break
            }
            Self.stop(process)
            let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            guard attempt < 3 else { throw ServerProcessError.exited("nginx did not start: \(log)") }
            port = try ServerProcess.freePort()  // Taken meanwhile by another test.
        }
        self.port = port
    }

    deinit {
        if let process { Self.stop(process) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// SIGKILL: a child spawned from a test thread inherits its blocked signals, SIGTERM among them, and nginx without
    /// a master process never unblocks it (SIGTERM would wait out the grace period). It keeps nothing worth a clean stop.
    private static func stop(_ process: ChildProcess) {
        process.kill(signal: SIGKILL)
        process.waitUntilExit()
    }

    private static func configuration(port: Int, upstreamPort: Int, name: String, certificate: (certificate: String, key: String),
                                      other: (certificate: String, key: String), directory: String) -> String {
        """
        daemon off;
        master_process off;
        pid \(directory)/nginx.pid;
        error_log stderr warn;
        events { worker_connections 256; }
        http {
            access_log off;
            client_body_temp_path \(directory)/tmp; proxy_temp_path \(directory)/tmp; fastcgi_temp_path \(directory)/tmp;
            uwsgi_temp_path \(directory)/tmp; scgi_temp_path \(directory)/tmp;
            map $http_upgrade $connection_upgrade { default upgrade; '' close; }
            ssl_protocols TLSv1.2 TLSv1.3;
            server {
                listen 127.0.0.1:\(port) ssl default_server;
                ssl_certificate \(other.certificate);
                ssl_certificate_key \(other.key);
                return 421;
            }
            server {
                listen 127.0.0.1:\(port) ssl;
                server_name \(name);
                ssl_certificate \(certificate.certificate);
                ssl_certificate_key \(certificate.key);
                location /parse {
                    proxy_pass http://127.0.0.1:\(upstreamPort);
                    proxy_http_version 1.1;
                    proxy_set_header Host $host;
                    proxy_set_header Upgrade $http_upgrade;
                    proxy_set_header Connection $connection_upgrade;
                    proxy_buffering off;
                    proxy_read_timeout 300s;
                }
            }
        }
        """
    }

    /// Whether something accepts connections on `port` within 10 s while `process` runs.
    static func waitForListener(port: Int, process: ChildProcess) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(descriptor)
            if connected { return true }
            usleep(50_000)
        }
        return false
    }
}
