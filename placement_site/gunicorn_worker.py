"""gunicorn's threaded worker, which serves every connection it has accepted before a
graceful stop (a reload, SIGHUP, or placement-api's stop).

The stock gthread worker accepts a connection, then waits in its event loop for the
request to arrive before handing it to a thread. A graceful stop ends that loop, and a
connection accepted but not yet handed over is closed unanswered: nginx reports
`upstream prematurely closed connection` and the client gets an error for a request
no worker saw. Behind nginx (placement-api, serve.py) a new connection always carries
a whole request already, so this worker hands it to a thread at once; the threads'
queue is drained before the worker exits (up to gunicorn's graceful_timeout).
"""
import errno

from gunicorn.workers.gthread import TConn, ThreadWorker


class DrainingThreadWorker(ThreadWorker):

    def accept(self, server, listener):
        try:
            sock, client = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        self.enqueue_req(TConn(self.cfg, sock, client, server))
