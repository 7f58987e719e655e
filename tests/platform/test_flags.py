"""tf.app.flags semantics (absl's, as TF 1.x wrapped them) and tf.app.run."""

import sys
import warnings

import pytest

from tensorflux.platform import app, flags


def make_flags() -> flags.FlagValues:
    fv = flags.FlagValues()
    flags.DEFINE_string("name", "anon", "A name.", flag_values=fv)
    flags.DEFINE_integer("steps", 10, "Steps.", flag_values=fv)
    flags.DEFINE_float("lr", 0.1, "Learning rate.", flag_values=fv)
    flags.DEFINE_boolean("verbose", False, "Talk more.", flag_values=fv)
    flags.DEFINE_bool("cache", True, "Cache.", flag_values=fv)
    flags.DEFINE_list("layers", "a,b", "Layers.", flag_values=fv)
    flags.DEFINE_enum("mode", "train", ["train", "eval"], "Mode.", flag_values=fv)
    flags.DEFINE_multi_string("tag", None, "Tags.", flag_values=fv)
    flags.DEFINE_multi_integer("port", [1], "Ports.", flag_values=fv)
    return fv


# -- value forms -------------------------------------------------------------------------------


def test_defaults_after_empty_parse():
    fv = make_flags()
    assert fv(["prog"]) == ["prog"]
    assert fv.flag_values_dict() == {
        "name": "anon",
        "steps": 10,
        "lr": 0.1,
        "verbose": False,
        "cache": True,
        "layers": ["a", "b"],
        "mode": "train",
        "tag": None,
        "port": [1],
    }


def test_equals_and_space_forms():
    fv = make_flags()
    fv(["prog", "--name=bob", "--steps", "5", "--lr=0.5", "--mode", "eval"])
    assert (fv.name, fv.steps, fv.lr, fv.mode) == ("bob", 5, 0.5, "eval")
    assert isinstance(fv.steps, int) and isinstance(fv.lr, float)


def test_single_dash_form():
    fv = make_flags()
    fv(["prog", "-steps=3", "-name", "x"])
    assert (fv.steps, fv.name) == (3, "x")


def test_space_form_takes_next_argument_even_if_dashed():
    fv = make_flags()
    fv(["prog", "--steps", "-5", "--name", "--odd"])
    assert (fv.steps, fv.name) == (-5, "--odd")


def test_integer_accepts_hex_and_octal():
    fv = make_flags()
    fv(["prog", "--steps=0x10"])
    assert fv.steps == 16
    fv(["prog", "--steps=0o10"])
    assert fv.steps == 8


def test_empty_string_value():
    fv = make_flags()
    fv(["prog", "--name="])
    assert fv.name == ""


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--verbose"], True),
        (["--noverbose"], False),
        (["--verbose=true"], True),
        (["--verbose=TRUE"], True),
        (["--verbose=t"], True),
        (["--verbose=1"], True),
        (["--verbose=false"], False),
        (["--verbose=False"], False),
        (["--verbose=0"], False),
        (["--verbose", "--noverbose"], False),
    ],
)
def test_boolean_forms(args, expected):
    fv = make_flags()
    fv(["prog", *args])
    assert fv.verbose is expected


def test_nocache_turns_true_default_off():
    fv = make_flags()
    fv(["prog", "--nocache"])
    assert fv.cache is False


def test_boolean_does_not_consume_next_argument():
    fv = make_flags()
    assert fv(["prog", "--verbose", "false"]) == ["prog", "false"]
    assert fv.verbose is True


@pytest.mark.parametrize("value", ["yes", "", "2"])
def test_bad_boolean_value_names_flag(value):
    fv = make_flags()
    with pytest.raises(flags.IllegalFlagValueError, match="--verbose"):
        fv(["prog", f"--verbose={value}"])


def test_negated_boolean_takes_no_value():
    fv = make_flags()
    with pytest.raises(flags.IllegalFlagValueError, match="does not take an argument"):
        fv(["prog", "--noverbose=1"])


def test_no_prefix_on_non_boolean_is_unknown():
    fv = make_flags()
    with pytest.raises(flags.UnrecognizedFlagError, match="nosteps"):
        fv(["prog", "--nosteps"])


def test_list_flag():
    fv = make_flags()
    fv(["prog", "--layers=conv, pool,dense"])
    assert fv.layers == ["conv", "pool", "dense"]
    fv(["prog", "--layers="])
    assert fv.layers == []


def test_list_default_may_be_a_list():
    fv = flags.FlagValues()
    flags.DEFINE_list("xs", ["p", "q"], "Xs.", flag_values=fv)
    fv(["prog"])
    assert fv.xs == ["p", "q"]


def test_enum_rejects_other_values():
    fv = make_flags()
    with pytest.raises(flags.IllegalFlagValueError, match=r"--mode=test.*<train\|eval>"):
        fv(["prog", "--mode=test"])


def test_enum_default_must_be_allowed():
    fv = flags.FlagValues()
    with pytest.raises(flags.IllegalFlagValueError, match="--color"):
        flags.DEFINE_enum("color", "red", ["green"], "Color.", flag_values=fv)
    with pytest.raises(ValueError):
        flags.DEFINE_enum("shade", None, [], "Shade.", flag_values=fv)


def test_enum_case_insensitive_returns_canonical_value():
    fv = flags.FlagValues()
    flags.DEFINE_enum(
        "mode", "train", ["train", "eval"], "Mode.", flag_values=fv, case_sensitive=False
    )
    fv(["prog", "--mode=EVAL"])
    assert fv.mode == "eval"


def test_multi_flags_accumulate_and_replace_default():
    fv = make_flags()
    fv(["prog", "--tag=a", "--tag", "b,c", "--port=8", "--port=9"])
    assert fv.tag == ["a", "b,c"]
    assert fv.port == [8, 9]
    assert fv["tag"].present == 2


def test_multi_flag_reparse_starts_fresh():
    fv = make_flags()
    fv(["prog", "--tag=a"])
    fv(["prog", "--tag=b"])
    assert fv.tag == ["b"]


def test_multi_integer_bad_value():
    fv = make_flags()
    with pytest.raises(flags.IllegalFlagValueError, match="--port=x"):
        fv(["prog", "--port=x"])


def test_multi_string_single_default_becomes_list():
    fv = flags.FlagValues()
    flags.DEFINE_multi_string("inc", "a", "Includes.", flag_values=fv)
    fv(["prog"])
    assert fv.inc == ["a"]


def test_none_defaults():
    fv = flags.FlagValues()
    flags.DEFINE_string("s", None, "S.", flag_values=fv)
    flags.DEFINE_integer("i", None, "I.", flag_values=fv)
    fv(["prog"])
    assert fv.s is None and fv.i is None


def test_string_defaults_are_parsed_for_typed_flags():
    fv = flags.FlagValues()
    flags.DEFINE_integer("i", "7", "I.", flag_values=fv)
    flags.DEFINE_boolean("b", "true", "B.", flag_values=fv)
    flags.DEFINE_float("f", 2, "F.", flag_values=fv)
    fv(["prog"])
    assert (fv.i, fv.b, fv.f) == (7, True, 2.0)
    assert isinstance(fv.f, float)


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arg, pattern",
    [
        ("--steps=abc", r"flag --steps=abc: invalid literal"),
        ("--steps=1.5", r"flag --steps=1.5"),
        ("--lr=fast", r"flag --lr=fast: could not convert"),
    ],
)
def test_bad_numbers_name_the_flag(arg, pattern):
    fv = make_flags()
    with pytest.raises(flags.IllegalFlagValueError, match=pattern):
        fv(["prog", arg])


def test_bad_integer_default_fails_at_definition():
    fv = flags.FlagValues()
    with pytest.raises(flags.IllegalFlagValueError, match="--n=q"):
        flags.DEFINE_integer("n", "q", "N.", flag_values=fv)


def test_bounds():
    fv = flags.FlagValues()
    flags.DEFINE_integer("n", 1, "N.", lower_bound=0, upper_bound=5, flag_values=fv)
    flags.DEFINE_float("p", 0.5, "P.", lower_bound=0.0, upper_bound=1.0, flag_values=fv)
    fv(["prog", "--n=5", "--p=0"])
    assert (fv.n, fv.p) == (5, 0.0)
    with pytest.raises(flags.IllegalFlagValueError, match="--n=-1"):
        fv(["prog", "--n=-1"])
    with pytest.raises(flags.IllegalFlagValueError, match="--p=1.5"):
        fv(["prog", "--p=1.5"])


def test_unknown_flag_raises_with_suggestion():
    fv = make_flags()
    with pytest.raises(flags.UnrecognizedFlagError, match="'step'.*steps") as info:
        fv(["prog", "--step=3"])
    assert isinstance(info.value, flags.Error)
    assert info.value.flagname == "step"


def test_unknown_single_dash_flag_raises():
    fv = make_flags()
    with pytest.raises(flags.UnrecognizedFlagError):
        fv(["prog", "-zz"])


def test_known_only_keeps_unknown_flags_in_place():
    fv = make_flags()
    rest = fv(["prog", "a", "--zz=1", "--steps=2", "b", "--", "--steps=3"], known_only=True)
    assert rest == ["prog", "a", "--zz=1", "b", "--", "--steps=3"]
    assert fv.steps == 2


def test_missing_value_at_end():
    fv = make_flags()
    with pytest.raises(flags.Error, match="Missing value for flag --steps"):
        fv(["prog", "--steps"])


def test_argv_must_be_a_nonempty_list():
    fv = make_flags()
    with pytest.raises(TypeError):
        fv("prog --steps=1")
    with pytest.raises(ValueError):
        fv([])


def test_duplicate_definition_raises_and_names_first_location():
    fv = make_flags()
    with pytest.raises(flags.DuplicateFlagError, match=r"'steps' is defined twice.*test_flags"):
        flags.DEFINE_integer("steps", 3, "Again.", flag_values=fv)
    assert issubclass(flags.DuplicateFlagError, flags.Error)


def test_allow_override_replaces():
    fv = flags.FlagValues()
    flags.DEFINE_integer("n", 1, "N.", flag_values=fv, allow_override=True)
    flags.DEFINE_integer("n", 2, "N.", flag_values=fv, allow_override=True)
    fv(["prog"])
    assert fv.n == 2


def test_unknown_attribute():
    fv = make_flags()
    fv(["prog"])
    with pytest.raises(AttributeError):
        _ = fv.nope
    with pytest.raises(flags.UnrecognizedFlagError):
        fv.nope = 3


# -- positionals and -- ------------------------------------------------------------------------


def test_positionals_are_returned_in_order_with_program_name():
    fv = make_flags()
    assert fv(["prog", "in.txt", "--steps=2", "-", "out.txt"]) == ["prog", "in.txt", "-", "out.txt"]
    assert fv.steps == 2


def test_double_dash_ends_flags():
    fv = make_flags()
    assert fv(["prog", "a", "--", "--steps=3", "b"]) == ["prog", "a", "--steps=3", "b"]
    assert fv.steps == 10


# -- state -------------------------------------------------------------------------------------


def test_parse_state_and_unparse():
    fv = make_flags()
    assert not fv.is_parsed()
    fv(["prog", "--steps=4"])
    assert fv.is_parsed()
    assert fv["steps"].present == 1 and not fv["steps"].using_default_value
    fv.unparse_flags()
    assert not fv.is_parsed()
    assert fv["steps"].value == 10


def test_mark_as_parsed_prevents_lazy_parse(monkeypatch):
    fv = make_flags()
    monkeypatch.setattr(sys, "argv", ["prog", "--steps=99"])
    fv.mark_as_parsed()
    assert fv.is_parsed()
    assert fv.steps == 10


def test_lazy_parse_reads_sys_argv_and_ignores_unknown(monkeypatch):
    fv = make_flags()
    monkeypatch.setattr(sys, "argv", ["prog", "-q", "--steps=7", "--whatever", "x", "--tag=t"])
    assert fv.steps == 7
    assert fv.is_parsed()
    assert fv.tag == ["t"]


def test_lazy_parse_keeps_default_for_bad_value(monkeypatch):
    fv = make_flags()
    monkeypatch.setattr(sys, "argv", ["prog", "--steps=many", "--name=z"])
    with pytest.warns(UserWarning, match="--steps=many"):
        assert fv.steps == 10
    assert fv.name == "z"


def test_lazy_parse_then_explicit_parse():
    fv = make_flags()
    _ = fv.steps  # lazily parses whatever pytest's argv is
    fv(["prog", "--steps=3"])
    assert fv.steps == 3


def test_assignment_sets_value_without_conversion():
    fv = make_flags()
    fv(["prog"])
    fv.steps = 42
    assert fv.steps == 42
    assert not fv["steps"].using_default_value
    fv.name = 5
    assert fv.name == 5


def test_set_default_parses_and_follows_unset_flag():
    fv = make_flags()
    fv(["prog", "--lr=0.3"])
    fv.set_default("steps", "20")
    fv.set_default("lr", 0.9)
    assert fv.steps == 20
    assert fv.lr == 0.3
    assert fv["lr"].default == 0.9
    with pytest.raises(flags.UnrecognizedFlagError):
        fv.set_default("nope", 1)


def test_flag_objects_and_container_protocol():
    fv = make_flags()
    assert "steps" in fv and "nope" not in fv
    assert len(fv) == 9
    assert set(fv) == set(fv.flag_values_dict())
    assert fv["steps"].default == 10
    assert fv["steps"].help == "Steps."
    assert fv.get_flag_value("nope", "dflt") == "dflt"
    assert "--steps: Steps." in fv.get_help()
    del fv.steps
    assert "steps" not in fv


def test_short_name():
    fv = flags.FlagValues()
    flags.DEFINE_integer("batch", 1, "Batch.", short_name="b", flag_values=fv)
    fv(["prog", "-b", "8"])
    assert fv.batch == 8


def test_tf1_keyword_names():
    fv = flags.FlagValues()
    flags.DEFINE_string(flag_name="x", default_value="v", docstring="X.", flag_values=fv)
    fv(["prog"])
    assert fv.x == "v"
    assert fv["x"].help == "X."


def test_flag_holder():
    fv = flags.FlagValues()
    holder = flags.DEFINE_integer("n", 1, "N.", flag_values=fv)
    fv(["prog", "--n=4"])
    assert (holder.name, holder.value, holder.default, holder.present) == ("n", 4, 1, True)


def test_module_level_define_uses_global_flags():
    holder = flags.DEFINE_string("test_flags_global_only", "g", "Global.")
    try:
        assert "test_flags_global_only" in flags.FLAGS
        assert flags.FLAGS["test_flags_global_only"].default == "g"
        assert holder.value == "g"
    finally:
        delattr(flags.FLAGS, "test_flags_global_only")


# -- validators --------------------------------------------------------------------------------


def test_mark_flag_as_required():
    fv = flags.FlagValues()
    flags.DEFINE_string("data", None, "Data.", flag_values=fv)
    flags.mark_flag_as_required("data", flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError, match="--data must have a value"):
        fv(["prog"])
    assert fv(["prog", "--data=x"]) == ["prog"]
    with pytest.raises(flags.IllegalFlagValueError):
        fv.data = None


def test_required_keyword_and_required_with_default_warns():
    fv = flags.FlagValues()
    flags.DEFINE_integer("n", None, "N.", flag_values=fv, required=True)
    with pytest.raises(flags.IllegalFlagValueError):
        fv(["prog"])
    flags.DEFINE_integer("m", 3, "M.", flag_values=fv)
    with pytest.warns(UserWarning, match="non-None default"):
        flags.mark_flag_as_required("m", flag_values=fv)
    with pytest.raises(flags.UnrecognizedFlagError):
        flags.mark_flag_as_required("nope", flag_values=fv)


def test_mark_flags_as_required():
    fv = flags.FlagValues()
    flags.DEFINE_string("a", None, "A.", flag_values=fv)
    flags.DEFINE_string("b", None, "B.", flag_values=fv)
    flags.mark_flags_as_required(["a", "b"], flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError, match="--b"):
        fv(["prog", "--a=1"])


def test_register_validator_and_decorator():
    fv = flags.FlagValues()
    flags.DEFINE_integer("n", 2, "N.", flag_values=fv)
    flags.register_validator("n", lambda v: v % 2 == 0, "must be even", flag_values=fv)

    @flags.validator("n", flag_values=fv)
    def _small(value):
        if value > 100:
            raise flags.ValidationError("too big")
        return True

    fv(["prog", "--n=4"])
    with pytest.raises(flags.IllegalFlagValueError, match="--n=3: must be even"):
        fv(["prog", "--n=3"])
    with pytest.raises(flags.IllegalFlagValueError, match="too big"):
        fv(["prog", "--n=102"])


# -- app.run -----------------------------------------------------------------------------------


@pytest.fixture
def global_flag():
    flags.DEFINE_integer("test_app_run_count", 1, "Count.")
    yield
    delattr(flags.FLAGS, "test_app_run_count")
    flags.FLAGS.unparse_flags()


def test_app_run_passes_remaining_argv_and_exits_with_result(global_flag):
    seen = {}

    def main(argv):
        seen["argv"] = argv
        seen["count"] = flags.FLAGS.test_app_run_count
        return 3

    with pytest.raises(SystemExit) as info:
        app.run(main, argv=["prog", "pos", "--test_app_run_count=5", "--undefined", "x"])
    assert info.value.code == 3
    # As TF1: unknown flags are tolerated and left for main.
    assert seen == {"argv": ["prog", "pos", "--undefined", "x"], "count": 5}


def test_app_run_defaults_to_sys_argv_and_main_module(global_flag, monkeypatch):
    calls = []
    monkeypatch.setattr(sys, "argv", ["prog", "--test_app_run_count=2", "file"])
    monkeypatch.setattr(sys.modules["__main__"], "main", calls.append, raising=False)
    with pytest.raises(SystemExit) as info:
        app.run()
    assert info.value.code is None
    assert calls == [["prog", "file"]]


def test_app_run_bad_flag_value_exits_1(global_flag, capsys):
    with pytest.raises(SystemExit) as info:
        app.run(lambda argv: 0, argv=["prog", "--test_app_run_count=x"])
    assert info.value.code == 1
    assert "--test_app_run_count=x" in capsys.readouterr().err


def test_app_run_help_prints_flags(global_flag, capsys):
    with pytest.raises(SystemExit) as info:
        app.run(lambda argv: 0, argv=["prog", "--help"])
    assert info.value.code == 1
    assert "--test_app_run_count: Count." in capsys.readouterr().out


def test_app_run_also_parses_absl_flags_when_the_program_imported_absl(global_flag):
    """TF 1.x's tf.flags was absl's registry: BERT's tokenization.py defines its flag with
    `from absl import flags` and reads it after tf.app.run() parsed the command line."""
    absl_flags = pytest.importorskip("absl.flags")
    absl_flags.DEFINE_bool("test_app_run_absl_keep", False, "Keep.")
    absl_flags.DEFINE_string("test_app_run_absl_name", "n", "Name.")
    seen = {}

    def main(argv):
        seen["argv"] = argv
        seen["values"] = (flags.FLAGS.test_app_run_count,
                          absl_flags.FLAGS.test_app_run_absl_keep,
                          absl_flags.FLAGS.test_app_run_absl_name)
        return 0

    try:
        with pytest.raises(SystemExit) as info:
            app.run(main, argv=["prog", "--test_app_run_count=4", "--test_app_run_absl_keep",
                                "pos", "--test_app_run_absl_name=bert", "--other=1"])
        assert info.value.code == 0
        assert seen == {"argv": ["prog", "pos", "--other=1"], "values": (4, True, "bert")}
        with pytest.raises(SystemExit) as info:
            app.run(main, argv=["prog", "--test_app_run_absl_keep=maybe"])
        assert info.value.code == 1
    finally:
        for name in ("test_app_run_absl_keep", "test_app_run_absl_name"):
            delattr(absl_flags.FLAGS, name)
        absl_flags.FLAGS.unparse_flags()


def test_app_exposes_flags_module():
    assert app.flags is flags


def test_no_warnings_at_import():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fv = make_flags()
        fv(["prog"])


def test_tf14_parse_flags_and_the_flags_dict():
    """TF <= 1.4 programs call FLAGS._parse_flags() and print FLAGS.__flags' items."""
    values = flags.FlagValues()
    flags.DEFINE_integer("batch_size", 64, "batch", flag_values=values)
    flags.DEFINE_string("run_name", "x", "name", flag_values=values)
    assert values._parse_flags(["--batch_size=8", "--unknown=3", "positional"]) == [
        "--unknown=3", "positional"]
    assert values.batch_size == 8
    # As TF <= 1.4 programs print their flags:
    printed = ["{}={}".format(k.upper(), v)  # noqa: UP032
               for k, v in sorted(values.__flags.items())]
    assert printed == ["BATCH_SIZE=8", "RUN_NAME=x"]
