"""Per-device state that outlives steps: variables, queues, readers, accumulators.

Resources live under `(container, name)`; the default container is "localhost". They stay until
their container is cleared (`Session.reset`, `tf.Session.reset(target, containers)`), so every
step and session on the same device sees the same object.
"""

from __future__ import annotations

import threading

from tensorflux.framework import errors

DEFAULT_CONTAINER = "localhost"


class ResourceMgr:
    """A thread-safe (container, name) -> resource table."""

    def __init__(self, device_name: str = ""):
        self._device_name = device_name
        self._lock = threading.Lock()
        self._containers: dict[str, dict] = {}

    def lookup(self, container: str, name: str):
        """Returns the resource or raises NotFoundError naming it."""
        found = self._containers.get(container or DEFAULT_CONTAINER, {}).get(name)
        if found is None:
            raise errors.NotFoundError(
                None, None, f"Resource {container or DEFAULT_CONTAINER}/{name} does not exist "
                f"on {self._device_name or 'this device'}.")
        return found

    def get(self, container: str, name: str):
        return self._containers.get(container or DEFAULT_CONTAINER, {}).get(name)

    def lookup_or_create(self, container: str, name: str, factory):
        """Returns the resource, creating it with `factory()` under the lock if absent."""
        table = self._containers.get(container or DEFAULT_CONTAINER)
        if table is not None:
            found = table.get(name)
            if found is not None:
                return found
        with self._lock:
            table = self._containers.setdefault(container or DEFAULT_CONTAINER, {})
            found = table.get(name)
            if found is None:
                found = factory()
                table[name] = found
            return found

    def create(self, container: str, name: str, resource) -> None:
        with self._lock:
            table = self._containers.setdefault(container or DEFAULT_CONTAINER, {})
            if name in table:
                raise errors.AlreadyExistsError(
                    None, None, f"Resource {container or DEFAULT_CONTAINER}/{name} already "
                    "exists.")
            table[name] = resource

    def delete(self, container: str, name: str) -> None:
        with self._lock:
            table = self._containers.get(container or DEFAULT_CONTAINER, {})
            if table.pop(name, None) is None:
                raise errors.NotFoundError(
                    None, None, f"Resource {container or DEFAULT_CONTAINER}/{name} does not "
                    "exist.")

    def cleanup(self, container: str) -> None:
        """Drops every resource of `container`, closing those that can be closed."""
        with self._lock:
            table = self._containers.pop(container or DEFAULT_CONTAINER, {})
        for resource in table.values():
            close = getattr(resource, "close_resource", None)
            if close is not None:
                close()

    def clear(self) -> None:
        for container in list(self._containers):
            self.cleanup(container)

    def containers(self) -> list:
        return list(self._containers)

    def resources(self, container: str | None = None) -> list:
        if container is None:
            return [r for table in self._containers.values() for r in table.values()]
        return list(self._containers.get(container, {}).values())
