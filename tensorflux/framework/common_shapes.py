"""Shape helpers shared by op families: broadcasting and unknown shapes."""

from __future__ import annotations

from tensorflux.framework.tensor_shape import TensorShape


def broadcast_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The NumPy broadcast of two static shapes; ValueError when they cannot broadcast."""
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    x, y = list(a._dim_list), list(b._dim_list)
    if len(x) < len(y):
        x = [1] * (len(y) - len(x)) + x
    else:
        y = [1] * (len(x) - len(y)) + y
    out = []
    for da, db in zip(x, y):
        if da == 1:
            out.append(db)
        elif db == 1:
            out.append(da)
        elif da is None:
            out.append(db if db is not None else None)
        elif db is None:
            out.append(da)
        elif da == db:
            out.append(da)
        else:
            raise ValueError(f"Dimensions must be equal, but are {da} and {db} for shapes "
                             f"{a} and {b} (they do not broadcast)")
    return TensorShape(out)


def unchanged(x: TensorShape) -> TensorShape:
    return x


def scalar_shape(*args, **kwargs) -> TensorShape:
    return TensorShape([])
