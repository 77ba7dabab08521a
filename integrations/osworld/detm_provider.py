"""detm_provider.py - OSWorld's desktop_env on detm task displays.

A Provider and a VMManager in the shape of OSWorld's
desktop_env/providers/base.py (xlang-ai/OSWorld), backed by detmd's HTTP
API instead of a VM:

  get_vm_path        a new name for an environment (no VM to find)
  start_emulator     registers a detm task with its own display
                     (POST /api/tasks {display: true}) and opens a
                     forwarder for it
  get_ip_address     "127.0.0.1:<forwarder port>:9222:0:0", the
                     "ip:server:chromium:vnc:vlc" form DesktopEnv parses
  revert_to_snapshot a fresh task (the old one is cancelled: its display
                     and programs stop, its history stays in detm)
  save_state         nothing to save (a fresh task is the clean state)
  stop_emulator      cancels the task (POST /api/tasks/<id>/cancel)

Why a forwarder: detmd serves OSWorld's in-VM server per task under
/osworld/<task_id>/ on its one port, but PythonController builds its URLs
as f"http://{vm_ip}:{server_port}" + "/screenshot" and DesktopEnv takes
server_port with int(): there is no room for a path prefix. Each
environment therefore gets a small local HTTP forwarder (standard library
only) whose every request goes to detmd's /osworld/<task_id>/<same path>,
with detmd's bearer token added. detmd keeps one listener, one set of
checks (Host, token, connection caps) and one log.

Use (DesktopEnv accepts only its own provider names, and detm behaves like
its "docker" provider: every start is a clean environment):

    import detm_provider
    detm_provider.install(url="http://127.0.0.1:18790", token=None)
    env = DesktopEnv(provider_name="docker", action_space="pyautogui", ...)

install() makes desktop_env's provider factory answer "docker" with detm.
Commands (/execute, which pyautogui actions go through) run only when
detmd was started with --osworld-exec; see docs/security.md.

Nothing here is OSWorld's code; it follows its provider interface.
"""
import http.client
import http.server
import json
import logging
import threading
import urllib.parse
import uuid

logger = logging.getLogger("detm.osworld")

_SIZES = {}     # path_to_vm -> (w, h) DesktopEnv asked get_vm_path for

_HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length",
        "authorization", "proxy-connection", "te", "upgrade"}


class _Detm:
    """detmd's HTTP API (JSON in, JSON out)."""

    def __init__(self, url, token=None, timeout=180):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port or 80
        self.token, self.timeout = token, timeout

    def conn(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def headers(self, extra=None):
        h = dict(extra or {})
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        return h

    def call(self, method, path, body=None):
        c = self.conn()
        try:
            data = json.dumps(body).encode() if body is not None else None
            c.request(method, path, body=data, headers=self.headers(
                {"Content-Type": "application/json"} if data is not None else {}))
            r = c.getresponse()
            text = r.read()
            if r.status >= 400:
                raise RuntimeError("detmd %s %s: %d %s" % (method, path, r.status, text[:300]))
            return json.loads(text) if text else {}
        finally:
            c.close()


class _Forwarder:
    """127.0.0.1:<free port> -> detmd /osworld/<task_id>/<path>."""

    def __init__(self, detm, task_id):
        self.detm, self.task_id = detm, task_id
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt, *args):
                logger.debug("forwarder %s: " + fmt, outer.task_id, *args)

            def _forward(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                h = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                c = outer.detm.conn()
                try:
                    c.request(self.command, "/osworld/%s%s" % (outer.task_id, self.path),
                              body=body, headers=outer.detm.headers(h))
                    r = c.getresponse()
                    self.send_response(r.status)
                    length = r.getheader("Content-Length")
                    for k, v in r.getheaders():
                        if k.lower() not in _HOP:
                            self.send_header(k, v)
                    if length is None:      # a chunked reply: forward it with a length-less close
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    else:
                        self.send_header("Content-Length", length)
                    self.end_headers()
                    while True:
                        chunk = r.read(65536)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                finally:
                    c.close()

            do_GET = do_POST = do_PUT = do_DELETE = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class DetmProvider:
    """OSWorld's Provider interface (desktop_env/providers/base.py) on detm."""

    def __init__(self, region=None, url="http://127.0.0.1:18790", token=None,
                 screen_size=(1920, 1080)):
        self.region = region
        self.detm = _Detm(url, token)
        self.screen_size = screen_size
        self.envs = {}      # path_to_vm -> (task_id, forwarder)
        self.lock = threading.Lock()

    def _new_task(self, path_to_vm):
        w, h = _SIZES.get(path_to_vm, self.screen_size)
        t = self.detm.call("POST", "/api/tasks", {
            "name": "osworld %s" % path_to_vm, "display": True,
            "display_width": w, "display_height": h,
            "metadata": {"osworld_env": path_to_vm}})
        return t["task_id"], _Forwarder(self.detm, t["task_id"])

    def _release(self, path_to_vm):
        env = self.envs.pop(path_to_vm, None)
        if env is None:
            return
        task_id, fwd = env
        fwd.close()
        try:
            self.detm.call("POST", "/api/tasks/%s/cancel" % task_id, {"reason": "osworld: released"})
        except RuntimeError as ex:      # already final: nothing to stop
            logger.info("release %s: %s", task_id, ex)

    def start_emulator(self, path_to_vm, headless=True, os_type=None, *args, **kwargs):
        with self.lock:
            if path_to_vm not in self.envs:
                self.envs[path_to_vm] = self._new_task(path_to_vm)

    def get_ip_address(self, path_to_vm):
        with self.lock:
            _, fwd = self.envs[path_to_vm]
            return "127.0.0.1:%d:9222:0:0" % fwd.port

    def task_id(self, path_to_vm):
        """The detm task behind an environment (for detm's own API)."""
        with self.lock:
            return self.envs[path_to_vm][0]

    def save_state(self, path_to_vm, snapshot_name):
        logger.info("detm: nothing to save for %s (a fresh task is the clean state)", path_to_vm)

    def revert_to_snapshot(self, path_to_vm, snapshot_name):
        with self.lock:
            self._release(path_to_vm)
            self.envs[path_to_vm] = self._new_task(path_to_vm)
        return path_to_vm

    def stop_emulator(self, path_to_vm, *args, **kwargs):
        with self.lock:
            self._release(path_to_vm)


class DetmVMManager:
    """OSWorld's VMManager interface: there are no VMs, only names."""
    checked_and_cleaned = True

    def initialize_registry(self, **kwargs):
        pass

    def add_vm(self, vm_path, **kwargs):
        pass

    def delete_vm(self, vm_path, **kwargs):
        pass

    def occupy_vm(self, vm_path, pid, **kwargs):
        pass

    def list_free_vms(self, **kwargs):
        return []

    def check_and_clean(self, **kwargs):
        pass

    def get_vm_path(self, **kwargs):
        path = "detm-" + uuid.uuid4().hex[:12]
        if kwargs.get("screen_size"):
            _SIZES[path] = tuple(kwargs["screen_size"])   # DesktopEnv's screen_size
        return path


def install(url="http://127.0.0.1:18790", token=None, screen_size=(1920, 1080), name="docker"):
    """Makes desktop_env's provider factory answer `name` with detm (see the top)."""
    import desktop_env.desktop_env as de     # OSWorld's package, on the harness's path

    original = de.create_vm_manager_and_provider

    def factory(provider_name, region, use_proxy=False):
        if provider_name.lower().strip() == name:
            return DetmVMManager(), DetmProvider(region, url, token, screen_size)
        return original(provider_name, region, use_proxy=use_proxy)
    de.create_vm_manager_and_provider = factory
    return factory
