"""gRPC servicers exposing a Worker and a Master on one server port."""

from __future__ import annotations

import threading
from concurrent import futures

from tensorflux.distributed.rpc.transport import GRPC_OPTIONS, tensor_chunks
from tensorflux.framework import errors


def _worker_servicer(worker):
    from tensorflux.protos import worker_service_pb2_grpc

    class WorkerServicer(worker_service_pb2_grpc.WorkerServiceServicer):
        def GetStatus(self, request, context):  # noqa: N802 - gRPC method names
            return worker.get_status(request)

        def CreateWorkerSession(self, request, context):  # noqa: N802
            return worker.create_worker_session(request)

        def DeleteWorkerSession(self, request, context):  # noqa: N802
            return worker.delete_worker_session(request)

        def RegisterGraph(self, request, context):  # noqa: N802
            return worker.register_graph(request)

        def DeregisterGraph(self, request, context):  # noqa: N802
            return worker.deregister_graph(request)

        def RunGraph(self, request, context):  # noqa: N802
            return worker.run_graph(request)

        def CleanupGraph(self, request, context):  # noqa: N802
            return worker.cleanup_graph(request)

        def CleanupAll(self, request, context):  # noqa: N802
            return worker.cleanup_all(request)

        def Logging(self, request, context):  # noqa: N802
            return worker.logging(request)

        def Tracing(self, request, context):  # noqa: N802
            return worker.tracing(request)

        def Abort(self, request, context):  # noqa: N802
            return worker.abort(request)

        def Shutdown(self, request, context):  # noqa: N802
            return worker.shutdown(request)

        def RecvTensor(self, request, context):  # noqa: N802
            event = threading.Event()
            box = []

            def respond(error, value, is_dead, incarnation):
                box.append((error, value, is_dead, incarnation))
                event.set()

            worker.recv_tensor(request, respond)
            while not event.wait(0.5):
                if not context.is_active():
                    return
            error, value, is_dead, incarnation = box[0]
            if error is not None:
                import grpc

                code = grpc.StatusCode.ABORTED
                if isinstance(error, errors.CancelledError):
                    code = grpc.StatusCode.CANCELLED
                context.abort(code, str(error))
            yield from tensor_chunks(value, is_dead, incarnation)

    return WorkerServicer()


def _master_servicer(master):
    from tensorflux.protos import master_service_pb2_grpc

    class MasterServicer(master_service_pb2_grpc.MasterServiceServicer):
        def CreateSession(self, request, context):  # noqa: N802
            return master.create_session(request)

        def ExtendSession(self, request, context):  # noqa: N802
            return master.extend_session(request)

        def PartialRunSetup(self, request, context):  # noqa: N802
            return master.partial_run_setup(request)

        def RunStep(self, request, context):  # noqa: N802
            return master.run_step(request)

        def CloseSession(self, request, context):  # noqa: N802
            return master.close_session(request)

        def ListDevices(self, request, context):  # noqa: N802
            return master.list_devices(request)

        def Reset(self, request, context):  # noqa: N802
            return master.reset(request)

    return MasterServicer()


def start_grpc_server(worker, master, address: str, max_workers: int = 64):
    """Binds both services on `address` ('host:port', port 0 picks one); returns
    (server, bound port)."""
    import grpc

    from tensorflux.protos import master_service_pb2_grpc, worker_service_pb2_grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers,
                                                    thread_name_prefix="tfx-grpc"),
                         options=GRPC_OPTIONS)
    worker_service_pb2_grpc.add_WorkerServiceServicer_to_server(_worker_servicer(worker),
                                                                 server)
    master_service_pb2_grpc.add_MasterServiceServicer_to_server(_master_servicer(master),
                                                                 server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise errors.UnavailableError(None, None, f"Could not bind a gRPC server to {address}")
    server.start()
    return server, port
