"""What shell commands do, as tables, for :mod:`plugins.shell_analysis`: the
wrappers and their options, the interpreters and their code flags, the
commands that delete, replace or re-permission their operands, and the
options and operands through which a command writes a file. A command that
is missing here is judged by its redirects and operands alone: add it where
its class is."""

import re

# wrapper -> (options that take an argument, leading operands before the command, options whose
# argument is a command string run by a shell)
WRAPPERS = {
    "sudo": ({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir", "--prompt",
              "--role", "--type", "--host", "--other-user", "--close-from", "--command-timeout"}, 0, set()),
    "doas": ({"-u", "-C"}, 0, set()), "nohup": (set(), 0, set()), "command": (set(), 0, set()),
    "builtin": (set(), 0, set()), "exec": ({"-a"}, 0, set()), "time": ({"-f", "-o", "--format", "--output"}, 0, set()),
    "nice": ({"-n", "--adjustment"}, 0, set()),
    "stdbuf": ({"-i", "-o", "-e", "--input", "--output", "--error"}, 0, set()),
    "env": ({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, 0, {"-S", "--split-string"}),
    "timeout": ({"-s", "-k", "--signal", "--kill-after"}, 1, set()),
    "ionice": ({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid"}, 0, set()),
    "chronic": (set(), 0, set()), "unbuffer": (set(), 0, set()), "setsid": (set(), 0, set()),
    "nocache": (set(), 0, set()), "unshare": (set(), 0, set()), "firejail": (set(), 0, set()),
    "flock": ({"-w", "--timeout", "-E", "--conflict-exit-code", "-c", "--command"}, 1, {"-c", "--command"}),
    "taskset": (set(), 1, set()), "chrt": (set(), 1, set()), "caffeinate": (set(), 0, set()),
    "script": ({"-c", "--command", "-E", "--echo", "-O", "--log-out", "-I", "--log-in", "-B", "--log-io", "-T",
                "--log-timing", "-m", "--logging-format"}, 0, {"-c", "--command"}),
    "su": ({"-c", "--command", "-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w"}, 0, {"-c", "--command"}),
    "runuser": ({"-u", "--user", "-g", "--group", "-G", "-c", "--command", "-s"}, 0, {"-c", "--command"}),
    "watch": ({"-n", "--interval", "-d", "-q", "--equexit"}, 0, set()),
    "systemd-run": ({"-p", "--property", "-u", "--unit", "-E", "--setenv", "--uid", "--gid", "-M"}, 0, set()),
}
SHELLS = {"sh", "bash", "zsh", "ksh", "dash", "fish", "csh", "tcsh", "ash", "mksh", "busybox"}
# interpreter -> (short option letters whose argument is code, long options or words that are)
INTERPRETERS = {"python": ("c", {"--command"}), "pypy": ("c", set()), "perl": ("eE", set()), "ruby": ("e", set()),
                "node": ("ep", {"--eval", "--print"}), "nodejs": ("ep", {"--eval", "--print"}), "php": ("r", set()),
                "lua": ("e", set()), "luajit": ("e", set()), "osascript": ("e", set()), "tclsh": ("", set()),
                "pwsh": ("c", {"-Command", "-EncodedCommand"}), "deno": ("", {"eval"}), "bun": ("e", {"--eval"}),
                "Rscript": ("e", set()), "julia": ("e", {"--eval"}), "awk": ("", set()), "gawk": ("", set())}
DELETING = {"rm", "srm", "unlink", "rmdir", "shred", "wipefs"}
REPLACING = {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "lzma", "compress"}  # the operand goes
KEEPING = {"-c", "--stdout", "--to-stdout", "-k", "--keep", "-t", "--test", "-l", "--list"}
PERMISSIONS = {"chmod", "chown", "chgrp"}
# command -> options whose argument is a file the command writes
OUTPUT_OPTIONS = {
    "sort": {"-o", "--output"}, "curl": {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--output-dir"},
    "wget": {"-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P", "--directory-prefix"},
    "tar": {"-C", "--directory"}, "unzip": {"-d"}, "openssl": {"-out"}, "iconv": {"-o", "--output"},
    "gcc": {"-o"}, "cc": {"-o"}, "g++": {"-o"}, "clang": {"-o"}, "ld": {"-o"}, "patch": {"-o", "--output"},
    "ssh-keygen": {"-f"}, "base64": {"-o"}, "git": {"-o", "--output"}, "pandoc": {"-o", "--output"},
    "yt-dlp": {"-o", "--output"}, "aria2c": {"-d", "--dir", "-o", "--out"}, "sqlite3": {"-cmd"},
}
# command -> which operands it writes (an index from the end, or "all")
OUTPUT_OPERANDS = {"cp": -1, "install": -1, "rsync": -1, "scp": -1, "tee": "all", "truncate": "all",
                   "uniq": 1, "xxd": 1, "mv": "all"}
COMPILERS = {"gcc", "cc", "g++", "clang", "ld"}
FIND_WRITES = {"-fprint", "-fprint0", "-fprintf", "-fls"}
FIND_RUNS = {"-exec", "-execdir", "-ok", "-okdir"}
XARGS_TAKES = {"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "--max-args",
               "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"}
EDITORS = {"ex", "ed", "vi", "vim", "nvim", "red"}
SAFE_WRITE_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"}
# a sed script that runs a command (``e``, ``s///e``) or writes a file (``w``, ``W``, ``s///w``)
_ADDRESS = r"(?:^|[;\n{}])\s*(?:[0-9$]+|/(?:[^/\\\n]|\\.)*/)?(?:,(?:[0-9$]+|/(?:[^/\\\n]|\\.)*/))?!?\s*"
SED_RUNS = re.compile(_ADDRESS + r"e\b|s(.)(?:(?!\1)[^\\\n]|\\.)*\1(?:(?!\1)[^\\\n]|\\.)*\1[gpiImM0-9]*e")
SED_WRITES = re.compile(_ADDRESS + r"[wW]\s*(\S.*)"
                        r"|s(.)(?:(?!\2)[^\\\n]|\\.)*\2(?:(?!\2)[^\\\n]|\\.)*\2[gpiImM0-9e]*w\s*(\S.*)")
