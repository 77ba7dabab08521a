"""controller.py - an OSWorld client written after xlang-ai/OSWorld's
desktop_env/controllers/python.py (PythonController) and
desktop_env/controllers/setup.py (SetupController), call by call: the same
routes, methods, bodies (JSON, urlencoded forms, multipart uploads) and
reply handling, without the retries and sleeps (a failure is the test's
answer, not something to retry). Written for detm's tests, not copied:
OSWorld is Apache-2.0; the route shapes are its public interface.

base is what PythonController builds as f"http://{vm_ip}:{server_port}";
with detm it is http://host:port/osworld/<task_id> (or the provider's
per-task forwarder, integrations/osworld/detm_provider.py).
"""
import json

import requests

JSON = {"Content-Type": "application/json"}


class Controller:
    def __init__(self, base, headers=None, timeout=60):
        self.http_server = base
        self.h = dict(headers or {})
        self.timeout = timeout

    def _get(self, route):
        return requests.get(self.http_server + route, headers=self.h, timeout=self.timeout)

    def _post(self, route, **kw):
        h = dict(self.h)
        h.update(kw.pop("headers", {}))
        return requests.post(self.http_server + route, headers=h, timeout=self.timeout, **kw)

    # ---- PythonController ----
    def get_screenshot(self):
        r = self._get("/screenshot")
        return r.content if r.status_code == 200 else None

    def get_accessibility_tree(self):
        r = self._get("/accessibility")
        return r.json()["AT"] if r.status_code == 200 else None

    def get_file(self, file_path):
        r = self._post("/file", data={"file_path": file_path})
        return r.content if r.status_code == 200 else None

    def execute_python_command(self, command, prefix="import time; {command}"):
        # OSWorld runs ["python", "-c", pkgs_prefix.format(command)]; Debian
        # has python3 only, and pyautogui is not needed to test the route.
        payload = json.dumps({"command": ["python3", "-c", prefix.format(command=command)],
                              "shell": False})
        r = self._post("/execute", headers=JSON, data=payload)
        return r.json() if r.status_code == 200 else None

    def execute(self, command, shell=False, route="/execute", **extra):
        body = {"command": command, "shell": shell}
        body.update(extra)
        return self._post(route, headers=JSON, data=json.dumps(body))

    def start_recording(self):
        return self._post("/start_recording")

    def end_recording(self, dest):
        r = self._post("/end_recording")
        if r.status_code == 200:
            with open(dest, "wb") as f:
                for chunk in r.iter_content(chunk_size=8192):
                    if chunk:
                        f.write(chunk)
        return r

    def get_vm_platform(self):
        return self._get("/platform").text

    def get_vm_screen_size(self):
        r = self._post("/screen_size")
        return r.json() if r.status_code == 200 else None

    def get_vm_window_size(self, app_class_name):
        r = self._post("/window_size", data={"app_class_name": app_class_name})
        return r.json() if r.status_code == 200 else None

    def get_vm_directory_tree(self, path):
        r = self._post("/list_directory", headers=JSON, data=json.dumps({"path": path}))
        return r.json()["directory_tree"] if r.status_code == 200 else None

    def get_cursor_position(self):
        r = self._get("/cursor_position")
        return r.json() if r.status_code == 200 else None

    # ---- SetupController ----
    def upload(self, path, data, filename="file"):
        return self._post("/setup/upload", data={"file_path": path},
                          files={"file_data": (filename, data)})

    def launch(self, command, shell=False):
        return self._post("/setup/launch", headers=JSON,
                          data=json.dumps({"command": command, "shell": shell}))

    def open_file(self, path):
        return self._post("/setup/open_file", headers=JSON, data=json.dumps({"path": path}))

    def activate_window(self, window_name, strict=False, by_class=False):
        return self._post("/setup/activate_window", headers=JSON, data=json.dumps(
            {"window_name": window_name, "strict": strict, "by_class": by_class}))

    def close_window(self, window_name, strict=False, by_class=False):
        return self._post("/setup/close_window", headers=JSON, data=json.dumps(
            {"window_name": window_name, "strict": strict, "by_class": by_class}))
