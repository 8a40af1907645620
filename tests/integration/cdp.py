"""A headless Chromium for the integration tests, driven over the DevTools
protocol (a websocket on 127.0.0.1) with the standard library only: load a
page, evaluate script in it, move and click the real mouse, take a
screenshot. Raises harness.Skip when Chromium is not installed (Debian's
package chromium; scripts/deps installs it)."""
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib

from harness import Skip, wait_for


class Chromium:
    """width, height: the window's; make it larger than the page, which
    is then drawn whole, on screen and under the mouse (a headless window
    keeps some 150 pixels of its height for itself)."""

    def __init__(self, url, width=1200, height=800):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if exe is None:
            raise Skip("chromium is not installed (Debian package chromium; "
                       "scripts/deps installs it)")
        self.dir = tempfile.mkdtemp(prefix="perfspill-chromium-")
        self.log = open(os.path.join(self.dir, "chromium.log"), "wb")
        self.proc = subprocess.Popen([
            exe, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--user-data-dir=" + os.path.join(self.dir,
                                                                "profile"),
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "--window-size=%d,%d" % (width, height), url],
            stdout=self.log, stderr=subprocess.STDOUT,
            # its org.chromium.Chromium.* files go with the profile (a
            # SIGTERM leaves them in /tmp)
            env=dict(os.environ, TMPDIR=self.dir))
        self.sock = None
        self.next_id = 0
        try:
            self._connect(url)
        except BaseException:
            self.close()
            raise

    def _connect(self, url):
        # Chromium names the port it took in its profile directory
        port_file = os.path.join(self.dir, "profile", "DevToolsActivePort")
        wait_for(lambda: os.path.exists(port_file) and
                 open(port_file).read().count("\n") >= 1 or
                 self.proc.poll() is not None, 60, "chromium's DevTools port")
        if self.proc.poll() is not None:
            raise AssertionError("chromium exited: " + self.read_log())
        port = int(open(port_file).read().split()[0])

        def page():
            with urllib.request.urlopen(
                    "http://127.0.0.1:%d/json/list" % port, timeout=10) as r:
                for t in json.load(r):
                    if t.get("type") == "page" and \
                            t.get("url", "").startswith("file:"):
                        return t["webSocketDebuggerUrl"]
            return None
        ws = wait_for(page, 60, "chromium's page")
        path = ws.split(str(port), 1)[1]
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" %
                           (path, port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise AssertionError("websocket closed in the handshake")
            head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head
        # the page first shown may be a blank one: wait for ours
        wait_for(lambda: self._settled(
            "location.href === %s && document.readyState" % json.dumps(url))
            == "complete", 60, "the page to load")

    def _settled(self, expr):
        """expr's value, or None while the page is still being replaced
        (a load destroys the context an evaluation ran in)."""
        try:
            return self.eval(expr)
        except AssertionError as e:
            if "context" in str(e).lower():
                time.sleep(0.1)
                return None
            raise

    def read_log(self):
        with open(os.path.join(self.dir, "chromium.log"), "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def _recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise AssertionError("websocket closed")
            buf += chunk
        return buf

    def _send(self, obj):
        data = json.dumps(obj).encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + body)

    def _recv(self):
        msg = b""
        while True:
            b0, b1 = self._recv_exact(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack("!H", self._recv_exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._recv_exact(8))[0]
            payload = self._recv_exact(n)
            op = b0 & 0x0f
            if op == 0x8:
                raise AssertionError("chromium closed the websocket")
            if op in (0x1, 0x2, 0x0):
                msg += payload
                if b0 & 0x80:
                    return json.loads(msg)

    def call(self, method, **params):
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        while True:
            m = self._recv()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise AssertionError("%s: %s" % (method, m["error"]))
                return m["result"]

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr,
                      returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise AssertionError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def mouse(self, kind, x, y):
        """The real mouse at page coordinates: 'move' or 'click'."""
        if kind == "move":
            self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
            return
        for t in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=t, x=x, y=y,
                      button="left", clickCount=1)

    def painted(self):
        """Returns once two frames have been drawn since the call: what
        a change of size or of the document did is on the screen."""
        wait_for(lambda: self._settled(
            "new Promise(function (r) { requestAnimationFrame(function () "
            "{ requestAnimationFrame(function () { r(true); }); }); })"),
            60, "two frames drawn")

    def screenshot(self, path):
        """A PNG of the document (an SVG's own width and height)."""
        self.painted()
        w, h = self.eval("[+document.documentElement.getAttribute('width')"
                         " || innerWidth, +document.documentElement"
                         ".getAttribute('height') || innerHeight]")
        data = base64.b64decode(self.call(
            "Page.captureScreenshot", format="png",
            clip={"x": 0, "y": 0, "width": w, "height": h,
                  "scale": 1})["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data

    def close(self):
        if self.sock is not None:
            self.sock.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def png_pixels(data):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG that
    is not interlaced, as Chromium's screenshots are."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack("!I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack("!IIBBBBB",
                                                                body)
            assert depth == 8 and color in (2, 6) and interlace == 0, \
                (depth, color, interlace)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xff
            elif f == 2:
                line[i] = (line[i] + b) & 0xff
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 0xff
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return w, h, rows
