"""How composite values (IndexedSlices, SparseTensor) are fetched and fed by `Session.run`."""

from __future__ import annotations

# (type, fetch_fn(obj) -> (list of fetches, contract_fn(values) -> value),
#  feed_fn(obj, value) -> list of (tensor, value), feed_fn_for_partial_run)
EXPANSIONS: list = []


def register_session_run_conversion_functions(tensor_type, fetch_function, feed_function=None,
                                              feed_function_for_partial_run=None) -> None:
    """Registers how a composite type is fetched and fed (TF's function of the same name)."""
    for entry in EXPANSIONS:
        if entry[0] is tensor_type:
            raise ValueError(f"{tensor_type} has already been registered so ignore it.")
    EXPANSIONS.append((tensor_type, fetch_function, feed_function,
                       feed_function_for_partial_run))
