"""A TCP proxy in front of the suite's database that misbehaves once when told to: the
ways a database server or the network between fail, on the real driver's wire.

The service's connection goes through it (`through_proxy`), and a test arms one fault:

* refuse(code): the next connection is refused with the server's error `code` (a MySQL
  error number, a PostgreSQL SQLSTATE) in the protocol's own error message;
* fail(pattern, code): the next statement whose message holds `pattern` is answered by
  that error instead of the server, and the connection is closed (as a server that
  shuts down, runs out of disk or turns read-only would answer);
* cut_commit(applied): the next COMMIT is sent on (applied=True: and its answer awaited)
  or not (False), and the connection is then dropped without an answer (and with
  then_stop_listening, nothing listens any more, until listen());
* cut_after_commit(): the next COMMIT is sent on and answered, and the connection is
  dropped at the driver's next message (MySQL turning autocommit back on: the server
  lost just after it committed);
* stop_listening(): new connections are refused (nothing listens), until listen();
* freeze(seconds): from now on, the next COMMIT (or any traffic, on_commit=False) is held
  without an answer, new connections too, for `seconds` (a frozen server).

Everything else is passed on unchanged. It listens on a port the system gives.
"""
import socket
import struct
import threading
import time

SSL_REQUEST, GSSENC_REQUEST = 80877103, 80877104


def mysql_error(code, message, sequence):
    payload = (b"\xff" + struct.pack("<H", code) + b"#HY000" + message.encode())
    return struct.pack("<I", len(payload))[:3] + bytes([sequence]) + payload


def postgresql_error(code, message, severity):
    fields = b"".join(tag + value.encode() + b"\0" for tag, value in (
        (b"S", severity), (b"V", severity), (b"C", code), (b"M", message)))
    body = fields + b"\0"
    answer = b"E" + struct.pack("!I", len(body) + 4) + body
    if severity == "ERROR":   # then ReadyForQuery: in a failed transaction
        answer += b"Z" + struct.pack("!I", 5) + b"E"
    return answer


class Proxy:
    def __init__(self, vendor, host, port):
        self.vendor, self.target = vendor, (host, port)
        self._lock = threading.Lock()
        self._fault = None            # (kind, argument): used once
        self._frozen_until = 0.0
        self._freeze_on_commit = False
        self._sockets = []
        self._listener = None
        self.port = None
        self.listen()

    # --- arming ---------------------------------------------------------------------

    def refuse(self, code):
        self._arm("refuse", code)

    def fail(self, pattern, code):
        self._arm("fail", (pattern, code))

    def cut_commit(self, applied, then_stop_listening=False):
        self._arm("cut", (applied, then_stop_listening))

    def cut_after_commit(self):
        self._arm("cut_after", None)

    def freeze(self, seconds, on_commit=True):
        with self._lock:
            self._freeze_on_commit = on_commit
            self._frozen_for = seconds
            if not on_commit:
                self._frozen_until = time.monotonic() + seconds

    def _arm(self, kind, argument):
        with self._lock:
            self._fault = (kind, argument)

    def _take(self, kind):
        with self._lock:
            if self._fault and self._fault[0] == kind:
                fault, self._fault = self._fault, None
                return fault[1]
        return None

    def _wait_while_frozen(self):
        while time.monotonic() < self._frozen_until:
            time.sleep(0.05)

    # --- listening ------------------------------------------------------------------

    def listen(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port or 0))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop_listening(self):
        listener, self._listener = self._listener, None
        if listener:
            _close(listener)   # shutdown first: close alone leaves accept() listening

    def close(self):
        self.stop_listening()
        for sock in list(self._sockets):
            _close(sock)

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        self._sockets.append(client)
        self._wait_while_frozen()
        code = self._take("refuse")
        if code is not None:
            self._refuse(client, code)
            return
        try:
            server = socket.create_connection(self.target)
        except OSError:
            _close(client)
            return
        self._sockets.append(server)
        link = {"held": threading.Event(), "answered": threading.Event(),
                "cut_next": False}
        threading.Thread(target=self._pump, args=(server, client, False, link),
                         daemon=True).start()
        self._pump(client, server, True, link)

    def _refuse(self, client, code):
        if self.vendor == "mysql":
            client.sendall(mysql_error(code, "refused by the test's proxy", 0))
        else:
            while True:   # answer "no" to SSL/GSS encryption, then read the startup
                head = _read(client, 8)
                if head is None:
                    return _close(client)
                length, request = struct.unpack("!II", head)
                if request in (SSL_REQUEST, GSSENC_REQUEST):
                    client.sendall(b"N")
                    continue
                _read(client, length - 8)
                break
            client.sendall(postgresql_error(code, "refused by the test's proxy", "FATAL"))
        _close(client)

    def _pump(self, source, sink, from_client, link):
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                _close(sink)
                _close(source)
                return
            if from_client and self._intercept(data, source, sink, link):
                return
            if not from_client:
                if link["held"].is_set():   # a cut COMMIT's answer: never delivered
                    link["answered"].set()
                    return
                self._wait_while_frozen()
            try:
                sink.sendall(data)
            except OSError:
                _close(source)
                return

    def _is_commit(self, data):
        """The driver's COMMIT: a MySQL COM_QUERY, a PostgreSQL simple query."""
        if self.vendor == "mysql":
            return data[4:] == b"\x03COMMIT"
        return data == b"Q" + struct.pack("!I", 11) + b"COMMIT\0"

    def _intercept(self, data, client, server, link):
        """True when the message was dealt with here (the connection is then over)."""
        if link["cut_next"]:
            _close(client)
            _close(server)
            return True
        failing = self._fault if self._fault and self._fault[0] == "fail" else None
        if failing and failing[1][0] in data and self._take("fail"):
            _pattern, code = failing[1]
            client.sendall(mysql_error(code, "failed by the test's proxy", 1)
                           if self.vendor == "mysql"
                           else postgresql_error(code, "failed by the test's proxy", "ERROR"))
            _close(client)
            _close(server)
            return True
        if not self._is_commit(data):
            return False
        if self._freeze_on_commit and getattr(self, "_frozen_for", 0):
            with self._lock:
                self._frozen_until = time.monotonic() + self._frozen_for
                self._frozen_for = 0
            return False   # sent on; its answer is held by the other direction
        if self._fault and self._fault[0] == "cut_after":
            self._take("cut_after")
            link["cut_next"] = True
            return False
        cut = self._take("cut")
        if cut is None:
            return False
        applied, then_stop_listening = cut
        if then_stop_listening:
            self.stop_listening()
        if applied:
            link["held"].set()
            server.sendall(data)
            link["answered"].wait(30)   # the server has committed
        _close(client)
        _close(server)
        return True


def _read(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
