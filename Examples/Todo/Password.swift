import Foundation

/// The terminal's settings while a password is read, restored by the signal handler on Ctrl-C.
nonisolated(unsafe) private var savedTerminal: termios?

/// Reads a password line from standard input: without echo when it is a terminal (as getpass does),
/// and as a plain line from a pipe, so scripts can still pipe one in.
func readPassword(prompt: String = "Password: ") -> String {
    var settings = termios()
    let isTerminal = isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &settings) == 0
    if isTerminal {
        savedTerminal = settings
        for stopSignal in [SIGINT, SIGTERM, SIGHUP] {
            signal(stopSignal) { received in
                if var original = savedTerminal { tcsetattr(STDIN_FILENO, TCSANOW, &original) }
                _exit(128 + received)
            }
        }
        settings.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
    }
    FileHandle.standardOutput.write(Data(prompt.utf8))  // After echo is off: what is typed after the prompt never shows.
    let line = readLine()
    if isTerminal, var original = savedTerminal {
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
        savedTerminal = nil
        FileHandle.standardOutput.write(Data("\n".utf8))  // The newline typed was not echoed either.
    }
    guard let line, !line.isEmpty else { fail("A password is needed.") }
    return line
}
