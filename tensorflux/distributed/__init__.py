"""The distributed runtime: servers, master and worker services, remote rendezvous."""

from tensorflux.distributed import session_backend as _session_backend

_session_backend.register()
