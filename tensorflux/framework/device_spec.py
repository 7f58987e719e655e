"""Device names: `/job:ps/replica:0/task:1/device:CPU:0`, partial specs and merging.

A `DeviceSpec` is a frozen value; every field may be None (unspecified). Parsing accepts the
TF spellings `/cpu:1`, `/device:CPU:1`, `/gpu:0`, `CPU:0`, and any order of components.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class DeviceSpec:
    """A (possibly partial) device specification."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @classmethod
    def from_string(cls, spec: str | None) -> DeviceSpec:
        """Parses a device string; raises ValueError naming a malformed part."""
        if isinstance(spec, DeviceSpec):
            return spec
        fields: dict = {}
        if not spec:
            return cls()
        for part in spec.split("/"):
            if not part:
                continue
            pieces = part.split(":")
            head = pieces[0].lower()
            try:
                if head == "job" and len(pieces) == 2:
                    fields["job"] = pieces[1]
                elif head == "replica" and len(pieces) == 2:
                    fields["replica"] = int(pieces[1])
                elif head == "task" and len(pieces) == 2:
                    fields["task"] = int(pieces[1])
                elif head == "device" and len(pieces) in (2, 3):
                    fields["device_type"] = pieces[1].upper()
                    if len(pieces) == 3 and pieces[2] != "*":
                        fields["device_index"] = int(pieces[2])
                elif len(pieces) in (1, 2) and head not in ("job", "replica", "task", "device"):
                    fields["device_type"] = pieces[0].upper()
                    if len(pieces) == 2 and pieces[1] != "*":
                        fields["device_index"] = int(pieces[1])
                else:
                    raise ValueError
            except ValueError:
                raise ValueError(f"Unknown attribute: '{part}' in '{spec}'") from None
        return cls(**fields)

    def to_string(self) -> str:
        out = []
        if self.job is not None:
            out.append(f"/job:{self.job}")
        if self.replica is not None:
            out.append(f"/replica:{self.replica}")
        if self.task is not None:
            out.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out.append(f"/device:{self.device_type}:{index}")
        return "".join(out)

    def make_merged_spec(self, other: DeviceSpec) -> DeviceSpec:
        """Returns self with the fields that `other` specifies overriding."""
        other = DeviceSpec.from_string(other) if not isinstance(other, DeviceSpec) else other
        updates = {k: v for k, v in other.__dict__.items() if v is not None}
        return replace(self, **updates)

    def merge_from(self, other) -> DeviceSpec:
        return self.make_merged_spec(other)

    def replace(self, **kwargs) -> DeviceSpec:
        return replace(self, **kwargs)

    def matches(self, full: DeviceSpec) -> bool:
        """True when every field this spec sets equals `full`'s."""
        return all(v is None or getattr(full, k) == v for k, v in self.__dict__.items())

    def __str__(self) -> str:
        return self.to_string()

    @property
    def type(self):  # TF1 name
        return self.device_type


def canonical_name(spec: str | DeviceSpec | None) -> str:
    """The canonical string of a (possibly partial) device spec: '/device:CPU:1'."""
    if not spec:
        return ""
    return DeviceSpec.from_string(spec).to_string()


def merge_device(outer: str, inner: str) -> str:
    """The device string for an op under `inner` nested in `outer` (inner fields win)."""
    if not outer:
        return canonical_name(inner)
    if not inner:
        return outer
    return DeviceSpec.from_string(outer).make_merged_spec(DeviceSpec.from_string(inner)).to_string()
