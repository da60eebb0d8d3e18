#!/usr/bin/env python3
"""Runs an unpacked sidecar image the way the kubelet runs the repo-server's cilium-cmp container
(sidecar/kustomize/argocd-repo-server-patch.yaml): root filesystem read-only
(readOnlyRootFilesystem), a fresh writable /tmp (the cilium-cmp-tmp emptyDir), uid and gid 999
with no supplementary groups (runAsUser, runAsGroup), no capabilities and no_new_privs
(capabilities.drop: [ALL], allowPrivilegeEscalation: false), the image config's Env.

Called by tests/it/sidecar_image.rs inside `unshare --mount --pid --net --fork` as root, so every
mount below, and the network (only a loopback interface), stays in those namespaces and ends
with them:

    sidecar_sandbox.py ROOTFS CONFIG SHIMDIR emulate PYTHON EMULATOR ARGS...
        argocd-cmp-server's part, played by ../shared/tools/cmp_emulator.py: it extracts the
        repository into the image's /tmp and runs plugin.yaml's command, which it finds on the
        image's PATH through a shim that enters the image (chroot to ROOTFS, cd to the same
        folder, drop to uid 999) and execs the command from the image's own PATH.
    sidecar_sandbox.py ROOTFS CONFIG SHIMDIR run [OPTION|KEY=VALUE...] CWD ARGV...
        one command of the image, run the same way (CWD is a path inside the image), with the
        image's Env and KEY=VALUE on top. Options: --kubelet-etc (the /etc/hosts and
        /etc/resolv.conf a pod gets), --dns=NAME (a DNS server on 127.0.0.1:53 that resolves
        NAME to 127.0.0.1), --listen=PORT (count connections to 127.0.0.1:PORT),
        --serve=PORT:FILE (answer HTTP GETs with FILE).

The emulator itself runs outside the image (the image has no Python), as root; only the plugin's
command runs inside. Before it does, the shim gives the emulator's work folder under /tmp to uid
999, as argocd-cmp-server (uid 999) owns the folders it extracts into.
"""

import ctypes
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import threading

UID = GID = 999
PR_SET_NO_NEW_PRIVS = 38  # linux/prctl.h


def image_env(config_path):
    with open(config_path) as f:
        config = json.load(f)
    env = {}
    for entry in config["config"].get("Env") or []:
        key, _, value = entry.partition("=")
        env[key] = value
    return env


def mount(*args):
    subprocess.run(["mount", *args], check=True)


def prepare(rootfs):
    """The container's mounts: the image read-only, /tmp a new tmpfs, /proc of this pid namespace."""
    mount("--make-rprivate", "/")
    mount("--bind", rootfs, rootfs)
    mount("-o", "remount,bind,ro", rootfs)
    mount("-t", "tmpfs", "-o", "mode=1777,size=1g", "tmpfs", os.path.join(rootfs, "tmp"))
    if os.path.isdir(os.path.join(rootfs, "proc")):
        mount("-t", "proc", "proc", os.path.join(rootfs, "proc"))


def loopback_up():
    """`ip link set lo up` in this network namespace (SIOCSIFFLAGS, netdevice(7))."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14x", b"lo", 0x1 | 0x40)  # IFF_UP | IFF_RUNNING
        fcntl.ioctl(s.fileno(), 0x8914, ifreq)


def kubelet_etc(rootfs, shimdir):
    """/etc/hosts and /etc/resolv.conf as the kubelet bind-mounts them into every container
    (the pod's names; the cluster's DNS server, here a stand-in on 127.0.0.1). Written into the
    test's own SHIMDIR, so that its owner can remove them when this ran through sudo."""
    d = shimdir
    files = {
        "hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n",
        "resolv.conf": "nameserver 127.0.0.1\nsearch svc.cluster.local cluster.local\noptions ndots:5\n",
    }
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        mount("--bind", os.path.join(d, name), os.path.join(rootfs, "etc", name))


def dns_answer(query, name):
    """A DNS reply (RFC 1035 4.1) to `query`: 127.0.0.1 for an A question about `name`, an
    empty NOERROR for any other question (AAAA), NXDOMAIN for any other name."""
    ident, _flags, qd = struct.unpack_from(">HHH", query)
    labels, i = [], 12
    while query[i]:
        labels.append(query[i + 1 : i + 1 + query[i]].decode().lower())
        i += 1 + query[i]
    qtype, _ = struct.unpack_from(">HH", query, i + 1)
    question = query[12 : i + 5]
    ours = ".".join(labels) == name
    rcode = 0 if ours else 3
    answers = b""
    if ours and qtype == 1:
        answers = struct.pack(">HHHIH4s", 0xC00C, 1, 1, 60, 4, socket.inet_aton("127.0.0.1"))
    header = struct.pack(">HHHHHH", ident, 0x8180 | rcode, 1, 1 if answers else 0, 0, 0)
    return header + question + answers


def serve_dns(name):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 53))

    def loop():
        while True:
            query, peer = sock.recvfrom(512)
            sock.sendto(dns_answer(query, name), peer)

    threading.Thread(target=loop, daemon=True).start()


def serve_tcp(port, log):
    """A listener that records each connection (the client reached the address its name resolved
    to) and closes it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()

    def loop():
        while True:
            conn, _ = sock.accept()
            log.append(port)
            conn.close()

    threading.Thread(target=loop, daemon=True).start()


def serve_file(port, path):
    """A plain HTTP/1.1 server answering every GET with the bytes of `path`."""
    with open(path, "rb") as f:
        body = f.read()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()

    def loop():
        while True:
            conn, _ = sock.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                head = "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
                conn.sendall(head.encode() + body)

    threading.Thread(target=loop, daemon=True).start()


def enter(rootfs, image_path, name, argv, cwd=None):
    """Becomes the container's process: chroot, uid/gid 999, no privileges; then execs `name`
    looked up on the image's PATH (as Go's exec.LookPath does in argocd-cmp-server)."""
    cwd = cwd if cwd is not None else os.getcwd()
    if cwd != rootfs and not cwd.startswith(rootfs.rstrip("/") + "/"):
        # The emulator ran the command outside the image's /tmp: the test set it up wrong.
        sys.exit(f"sidecar_sandbox: {cwd} is not inside the image {rootfs}")
    inside = "/" + os.path.relpath(cwd, rootfs) if cwd != rootfs else "/"
    parts = inside.strip("/").split("/")
    if len(parts) >= 2 and parts[0] == "tmp":
        give_to_argocd(os.path.join(rootfs, "tmp", parts[1]))
    os.chroot(rootfs)
    os.chdir(inside)
    os.setgroups([])
    os.setgid(GID)
    os.setuid(UID)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit("sidecar_sandbox: prctl(PR_SET_NO_NEW_PRIVS) failed")
    env = dict(os.environ)
    env["PATH"] = image_path
    for d in image_path.split(":"):
        exe = os.path.join(d or ".", name)
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            os.execve(exe, [name, *argv], env)
    sys.exit(f'sidecar_sandbox: exec: "{name}": executable file not found in $PATH ({image_path})')


def give_to_argocd(top):
    """chown -R 999:999 TOP (the emulator's work folder: mkdtemp makes it 0700, root's)."""
    os.chown(top, UID, GID, follow_symlinks=False)
    for base, dirs, files in os.walk(top):
        for name in dirs + files:
            os.chown(os.path.join(base, name), UID, GID, follow_symlinks=False)


def write_shim(shimdir, rootfs, image_path, name):
    """`name` on the emulator's PATH: a script that enters the image and runs the image's `name`."""
    here = os.path.dirname(os.path.abspath(__file__))
    shim = os.path.join(shimdir, name)
    with open(shim, "w") as f:
        f.write(
            f"#!{sys.executable}\n"
            "import sys\n"
            # No __pycache__ beside this file in the checkout.
            "sys.dont_write_bytecode = True\n"
            f"sys.path.insert(0, {here!r})\n"
            "import sidecar_sandbox\n"
            f"sidecar_sandbox.enter({rootfs!r}, {image_path!r}, {name!r}, sys.argv[1:])\n"
        )
    os.chmod(shim, 0o755)


def run(rootfs, shimdir, env, rest):
    """`run`: options and KEY=VALUE words first, then the folder and the command. The command
    runs in a child, so that the servers here answer it; its exit status is this one's."""
    connections = []
    while rest and not rest[0].startswith("/"):
        word = rest.pop(0)
        if word == "--kubelet-etc":
            kubelet_etc(rootfs, shimdir)
        elif word.startswith("--dns="):
            serve_dns(word.split("=", 1)[1])
        elif word.startswith("--listen="):
            serve_tcp(int(word.split("=", 1)[1]), connections)
        elif word.startswith("--serve="):
            port, path = word.split("=", 1)[1].split(":", 1)
            serve_file(int(port), path)
        elif "=" in word:
            key, _, value = word.partition("=")
            env[key] = value
        else:
            sys.exit(f"sidecar_sandbox: unknown run option {word!r}")
    cwd, name, *argv = rest
    pid = os.fork()
    if pid == 0:
        # The container's environment is the image's Env and nothing of this process's.
        os.environ.clear()
        os.environ.update(env)
        enter(rootfs, env.get("PATH", ""), name, argv, cwd=os.path.join(rootfs, cwd.lstrip("/")))
    _, status = os.waitpid(pid, 0)
    for port in connections:
        print(f"sidecar_sandbox: a connection to 127.0.0.1:{port}", file=sys.stderr)
    sys.exit(os.waitstatus_to_exitcode(status))


def main():
    rootfs, config, shimdir, mode, *rest = sys.argv[1:]
    rootfs = os.path.abspath(rootfs)
    env = image_env(config)
    prepare(rootfs)
    loopback_up()
    if mode == "run":
        run(rootfs, shimdir, env, rest)
    if mode != "emulate":
        sys.exit(f"sidecar_sandbox: unknown mode {mode!r} (emulate, run)")
    python, emulator, *args = rest
    write_shim(shimdir, rootfs, env.get("PATH", ""), "cilium-cmp")
    sidecar = ["--isolate-env"]
    for key, value in env.items():
        if key != "PATH":
            sidecar += ["--sidecar-env", f"{key}={value}"]
    # The emulator's own PATH is the sidecar's: there it finds the shim, as argocd-cmp-server
    # finds the image's cilium-cmp on the image's PATH.
    proc = subprocess.run(
        [python, emulator, *sidecar, "--sidecar-env", f"PATH={shimdir}", *args],
        env={"PATH": shimdir, "TMPDIR": os.path.join(rootfs, "tmp"), "HOME": os.path.join(rootfs, "tmp")},
    )
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
