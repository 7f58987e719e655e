"""Device names: `/job:ps/replica:0/task:1/device:CPU:0`, partial specs and merging.

Contract: a `DeviceSpec` has five optional fields (job, replica, task, device_type,
device_index); None means "unspecified". Equality and hashing go by `to_string()`. As in TF1's
`tf.DeviceSpec` (DeviceSpecV1) the fields can be assigned and `merge_from` /
`parse_from_string` update the spec in place; `make_merged_spec`, `replace` and `from_string`
return new specs.

Parsing accepts the TF spellings `/cpu:1`, `/device:CPU:1`, `/gpu:0`, `CPU:0`, `job:ps`, and
any order of components (a repeated component: the last one wins); `*` as an index means
"any". Device types are upper-cased (`/device:cpu:0` is `/device:CPU:0`). Merging takes every
field the other spec sets, so `/job:ps/task:0` merged with `/cpu:1` is
`/job:ps/task:0/device:CPU:1`, and `/cpu:*` merged into `/cpu:0` keeps index 0.
"""

from __future__ import annotations

_FIELDS = ("job", "replica", "task", "device_type", "device_index")
# Types that may be written without "device:" (`/cpu:0`, `gpu:1`).
_SHORT_TYPES = frozenset({"CPU", "GPU", "TPU"})


def _parse(spec: str) -> dict:
    """Splits a device string into its fields; ValueError names a malformed part."""
    fields: dict = {}
    for part in spec.split("/"):
        if not part:
            continue
        pieces = part.split(":")
        head = pieces[0].lower()
        count = len(pieces)
        if head in ("job", "replica", "task") and count == 2:
            fields[head] = pieces[1] if head == "job" else int(pieces[1])
            continue
        if head == "device" and count == 3:
            device_type, index = pieces[1], pieces[2]
        elif head.upper() in _SHORT_TYPES and count in (1, 2):
            device_type, index = pieces[0], pieces[1] if count == 2 else "*"
        else:
            raise ValueError(f"Unknown attribute '{head}' is encountered while parsing the "
                             f"device spec: '{spec}'.")
        if "device_type" in fields:
            raise ValueError(f"Multiple device types are not allowed while parsing the device "
                             f"spec: {spec}.")
        fields["device_type"] = device_type.upper()
        fields["device_index"] = None if index == "*" else int(index)
    return fields


class DeviceSpec:
    """A (possibly partial) device specification (see the module docstring).

    Example:
        >>> DeviceSpec.from_string("/job:ps/task:0").make_merged_spec(
        ...     DeviceSpec(device_type="CPU", device_index=1)).to_string()
        '/job:ps/task:0/device:CPU:1'
    """

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index")

    def __init__(self, job: str | None = None, replica: int | None = None,
                 task: int | None = None, device_type: str | None = None,
                 device_index: int | None = None):
        self.job = job
        self.replica = replica
        self.task = task
        self.device_type = device_type
        self.device_index = device_index

    # -- fields ----------------------------------------------------------------------------

    @property
    def job(self) -> str | None:
        return self._job

    @job.setter
    def job(self, value) -> None:
        self._job = None if value is None else str(value)

    @property
    def replica(self) -> int | None:
        return self._replica

    @replica.setter
    def replica(self, value) -> None:
        self._replica = None if value is None else int(value)

    @property
    def task(self) -> int | None:
        return self._task

    @task.setter
    def task(self, value) -> None:
        self._task = None if value is None else int(value)

    @property
    def device_type(self) -> str | None:
        return self._device_type

    @device_type.setter
    def device_type(self, value) -> None:
        self._device_type = None if value is None else str(value).upper()

    @property
    def device_index(self) -> int | None:
        return self._device_index

    @device_index.setter
    def device_index(self, value) -> None:
        self._device_index = None if value is None else int(value)

    @property
    def type(self) -> str | None:
        """The device type (the name TF1 code sometimes uses)."""
        return self._device_type

    def _as_dict(self) -> dict:
        return {name: getattr(self, name) for name in _FIELDS}

    # -- parsing and printing --------------------------------------------------------------

    @classmethod
    def from_string(cls, spec) -> DeviceSpec:
        """Parses `spec` ('' or None gives an empty spec).

        Raises:
            ValueError: a component is not job/replica/task/device or an index is not an int.
        """
        if isinstance(spec, DeviceSpec):
            return spec.replace()
        if isinstance(spec, bytes):
            spec = spec.decode()
        return cls(**_parse(spec)) if spec else cls()

    def parse_from_string(self, spec: str) -> DeviceSpec:
        """Sets the fields `spec` names (others are left alone); returns self."""
        for key, value in _parse(spec or "").items():
            setattr(self, key, value)
        return self

    def to_string(self) -> str:
        """The canonical string: '/job:J/replica:R/task:T/device:TYPE:INDEX' (set parts)."""
        out = []
        if self._job is not None:
            out.append(f"/job:{self._job}")
        if self._replica is not None:
            out.append(f"/replica:{self._replica}")
        if self._task is not None:
            out.append(f"/task:{self._task}")
        if self._device_type is not None:
            index = "*" if self._device_index is None else self._device_index
            out.append(f"/device:{self._device_type}:{index}")
        return "".join(out)

    # -- merging ---------------------------------------------------------------------------

    def make_merged_spec(self, dev) -> DeviceSpec:
        """A new spec: self's fields, overridden by every field `dev` sets."""
        merged = self.replace()
        merged.merge_from(dev)
        return merged

    def merge_from(self, dev) -> None:
        """Overrides this spec's fields with those `dev` (a spec or string) sets, in place."""
        other = dev if isinstance(dev, DeviceSpec) else DeviceSpec.from_string(dev)
        for key, value in other._as_dict().items():
            if value is not None:
                setattr(self, key, value)

    def replace(self, **kwargs) -> DeviceSpec:
        """A copy with the given fields replaced."""
        fields = self._as_dict()
        for key in kwargs:
            if key not in fields:
                raise TypeError(f"DeviceSpec has no field {key!r}; fields: {', '.join(_FIELDS)}")
        fields.update(kwargs)
        return DeviceSpec(**fields)

    def matches(self, full: DeviceSpec) -> bool:
        """True when every field this spec sets equals `full`'s."""
        return all(value is None or getattr(full, key) == value
                   for key, value in self._as_dict().items())

    def is_compatible_with(self, other: DeviceSpec) -> bool:
        """True when no field is set differently in the two specs."""
        return all(a is None or b is None or a == b
                   for a, b in zip(self._as_dict().values(), other._as_dict().values()))

    # -- value semantics -------------------------------------------------------------------

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value}" for key, value in self._as_dict().items())
        return f"<DeviceSpec({fields})>"

    def __str__(self) -> str:
        return self.to_string()


def canonical_name(spec) -> str:
    """The canonical string of a (possibly partial) device spec: '/device:CPU:1'."""
    if not spec:
        return ""
    return DeviceSpec.from_string(spec).to_string()


def merge_device(outer, inner) -> str:
    """The device string for an op under `inner` nested in `outer` (inner fields win)."""
    if not inner:
        return canonical_name(outer)
    if not outer:
        return canonical_name(inner)
    return DeviceSpec.from_string(outer).make_merged_spec(inner).to_string()


__all__ = ["DeviceSpec", "canonical_name", "merge_device"]
