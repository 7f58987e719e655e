"""absl.flags API beyond the basic DEFINE_* (tf.flags / tf.app.flags), with argv lists."""

import enum
import types
import warnings

import pytest

import tensorflux as tf
from tensorflux.platform import flags


@pytest.fixture
def fv():
    return flags.FlagValues()


def test_names_on_tf_flags_and_tf_app_flags():
    for name in ("DEFINE_multi_enum", "DEFINE_spaceseplist", "DEFINE_alias", "DEFINE_multi",
                 "DEFINE_flag", "DEFINE", "mark_flags_as_mutual_exclusive",
                 "mark_bool_flags_as_mutual_exclusive", "multi_flags_validator",
                 "register_multi_flags_validator", "declare_key_flag", "adopt_module_key_flags",
                 "disclaim_key_flags", "flag_dict_to_args", "set_default", "override_value"):
        assert callable(getattr(tf.flags, name)) and getattr(tf.app.flags, name) is getattr(
            tf.flags, name)


def test_multi_enum(fv):
    flags.DEFINE_multi_enum("color", ["red"], ["red", "Green", "blue"], "c", flag_values=fv)
    flags.DEFINE_multi_enum("shade", None, ["Dark", "light"], "s", case_sensitive=False,
                            flag_values=fv)
    fv(["prog"])
    assert fv.color == ["red"] and fv.shade is None
    fv(["prog", "--color=blue", "--color", "Green", "--shade=DARK", "--shade=Light"])
    assert fv.color == ["blue", "Green"] and fv.shade == ["Dark", "light"]
    with pytest.raises(flags.IllegalFlagValueError,
                       match=r"flag --color=green: value should be one of <red\|Green\|blue>"):
        fv(["prog", "--color=green"])
    with pytest.raises(ValueError, match="enum_values"):
        flags.DEFINE_multi_enum("none", None, [], "n", flag_values=fv)


def test_spaceseplist(fv):
    flags.DEFINE_spaceseplist("words", "a  b\tc", "w", flag_values=fv)
    flags.DEFINE_spaceseplist("mixed", None, "m", comma_compat=True, flag_values=fv)
    fv(["prog", "--mixed=x,y z,,w"])
    assert fv.words == ["a", "b", "c"] and fv.mixed == ["x", "y", "z", "w"]
    fv(["prog", "--words="])
    assert fv.words == []
    fv(["prog", "--words=x,y"])
    assert fv.words == ["x,y"]


def test_alias_reads_and_writes_the_original(fv):
    flags.DEFINE_integer("steps", 5, "s", flag_values=fv)
    flags.DEFINE_boolean("fast", False, "f", flag_values=fv)
    flags.DEFINE_alias("n", "steps", flag_values=fv)
    flags.DEFINE_alias("quick", "fast", flag_values=fv)
    fv(["prog", "--n=7", "--quick"])
    assert (fv.steps, fv.n, fv.fast, fv.quick) == (7, 7, True, True)
    assert fv["n"].help == "Alias for --steps." and fv["n"].present == 1
    fv(["prog", "--noquick"])
    assert fv.fast is False
    fv.n = 11
    assert fv.steps == 11
    # absl: the original flag parses the value, so the error names it
    with pytest.raises(flags.IllegalFlagValueError, match="flag --steps=x"):
        fv(["prog", "--n=x"])
    with pytest.raises(flags.UnrecognizedFlagError, match="nope"):
        flags.DEFINE_alias("a", "nope", flag_values=fv)
    fv.unparse_flags()
    assert fv.steps == 5 and fv.n == 5


class _Pair(flags.ArgumentParser):
    def parse(self, argument):
        left, sep, right = argument.partition(":")
        if not sep:
            raise ValueError("expected left:right")
        return (left, int(right))

    def flag_type(self):
        return "pair"


def test_generic_define_and_multi_with_parser_objects(fv):
    flags.DEFINE(_Pair(), "pair", "a:1", "p", flag_values=fv)
    flags.DEFINE_multi(_Pair(), flags.ArgumentSerializer(), "pairs", None, "ps",
                       flag_values=fv)
    fv(["prog", "--pair=b:2", "--pairs=c:3", "--pairs", "d:4"])
    assert fv.pair == ("b", 2) and fv.pairs == [("c", 3), ("d", 4)]
    assert fv["pair"].type_name == "pair"
    with pytest.raises(flags.IllegalFlagValueError, match="flag --pair=bad: expected left:right"):
        fv(["prog", "--pair=bad"])
    flag = flags.Flag(int, "raw", "3", "r")
    holder = flags.DEFINE_flag(flag, fv)
    fv(["prog", "--raw=9"])
    assert holder.value == 9 and fv["raw"] is flag
    with pytest.raises(flags.DuplicateFlagError):
        flags.DEFINE_flag(flags.Flag(int, "raw", "1", "r"), fv)
    with pytest.raises(TypeError):
        flags.DEFINE_flag("raw", fv)


def test_enum_class(fv):
    class Mode(enum.Enum):
        TRAIN = 1
        EVAL = 2

    flags.DEFINE_enum_class("mode", Mode.TRAIN, Mode, "m", flag_values=fv)
    fv(["prog", "--mode=eval"])
    assert fv.mode is Mode.EVAL
    with pytest.raises(flags.IllegalFlagValueError, match="TRAIN|EVAL"):
        fv(["prog", "--mode=test"])


def test_mutual_exclusion_at_parse_and_assignment(fv):
    flags.DEFINE_string("a", None, "a", flag_values=fv)
    flags.DEFINE_integer("b", None, "b", flag_values=fv)
    flags.mark_flags_as_mutual_exclusive(["a", "b"], flag_values=fv)
    assert fv(["prog", "--a=x"]) == ["prog"]
    fv(["prog"])
    with pytest.raises(flags.IllegalFlagValueError,
                       match=r"flags a=x, b=2: At most one of \(a, b\) must have a value "
                             "other than None."):
        fv(["prog", "--a=x", "--b=2"])
    fv.unparse_flags()
    fv(["prog", "--b=1"])
    with pytest.raises(flags.IllegalFlagValueError, match="At most one"):
        fv.a = "y"


def test_required_mutual_exclusion_and_default_warning(fv):
    flags.DEFINE_string("a", None, "a", flag_values=fv)
    flags.DEFINE_string("b", "set", "b", flag_values=fv)
    with pytest.warns(UserWarning, match="--b has a non-None default"):
        flags.mark_flags_as_mutual_exclusive(["a", "b"], required=True, flag_values=fv)
    fv(["prog"])
    with pytest.raises(flags.IllegalFlagValueError, match=r"Exactly one of \(a, b\)"):
        fv(["prog", "--a=1"])


def test_bool_mutual_exclusion(fv):
    flags.DEFINE_boolean("x", False, "x", flag_values=fv)
    flags.DEFINE_boolean("y", False, "y", flag_values=fv)
    flags.DEFINE_string("s", None, "s", flag_values=fv)
    flags.mark_bool_flags_as_mutual_exclusive(["x", "y"], required=True, flag_values=fv)
    fv(["prog", "--x"])
    fv.unparse_flags()  # a parse keeps earlier values (absl), so start again
    with pytest.raises(flags.IllegalFlagValueError, match=r"Exactly one of \(x, y\) must be"):
        fv(["prog"])
    with pytest.raises(flags.IllegalFlagValueError, match="must be True"):
        fv(["prog", "--x", "--y"])
    with pytest.raises(flags.ValidationError, match="--s is not Boolean"):
        flags.mark_bool_flags_as_mutual_exclusive(["x", "s"], flag_values=fv)


def test_multi_flags_validator(fv):
    low = flags.DEFINE_integer("low", 0, "l", flag_values=fv)
    high = flags.DEFINE_integer("high", 10, "h", flag_values=fv)
    seen = []

    @flags.multi_flags_validator([low, high], message="low must be < high")
    def _ordered(values):
        seen.append(dict(values))
        return values["low"] < values["high"]

    fv(["prog", "--low=3"])
    assert seen[-1] == {"low": 3, "high": 10}
    with pytest.raises(flags.IllegalFlagValueError,
                       match="flags low=12, high=10: low must be < high"):
        fv(["prog", "--low=12"])

    def raises(values):
        raise flags.ValidationError(f"sum is {values['low'] + values['high']}")

    flags.register_multi_flags_validator(["low", "high"], raises, flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError, match="sum is 11"):
        fv(["prog", "--low=1"])
    with pytest.raises(flags.UnrecognizedFlagError):
        flags.register_multi_flags_validator(["low", "nope"], raises, flag_values=fv)


def test_key_flags(fv):
    flags.DEFINE_string("mine", "", "m", flag_values=fv)
    other = types.ModuleType("other_lib")
    flags.DEFINE_string("theirs", "", "t", flag_values=fv, module_name="other_lib")
    flags.DEFINE_string("hidden", "", "h", flag_values=fv, module_name="third_lib")
    assert fv.find_module_defining_flag("theirs") == "other_lib"
    assert fv.find_module_defining_flag("mine") == __name__
    assert [f.name for f in fv.get_key_flags_for_module(__name__)] == ["mine"]
    flags.declare_key_flag("hidden", flag_values=fv)
    flags.adopt_module_key_flags(other, flag_values=fv)
    assert [f.name for f in fv.get_key_flags_for_module(__name__)] == [
        "mine", "hidden", "theirs"]
    assert [f.name for f in fv.flags_by_module_dict()["other_lib"]] == ["theirs"]
    with pytest.raises(ValueError, match="Flag --nope is undefined"):
        flags.declare_key_flag("nope", flag_values=fv)
    with pytest.raises(flags.Error, match="Expected a module object"):
        flags.adopt_module_key_flags("other_lib", flag_values=fv)


def test_disclaim_key_flags_attributes_definitions_to_the_caller(fv):
    helper = types.ModuleType("flag_helper_lib")
    source = ("from tensorflux.platform import flags\n"
              "flags.disclaim_key_flags()\n"
              "def define(fv):\n"
              "    flags.DEFINE_integer('through_helper', 1, 'h', flag_values=fv)\n")
    exec(compile(source, "<flag_helper_lib>", "exec"), helper.__dict__)  # noqa: S102
    helper.define(fv)
    assert fv.find_module_defining_flag("through_helper") == __name__


def test_flag_dict_to_args():
    args = list(flags.flag_dict_to_args(
        {"a": None, "b": True, "c": False, "d": "x y", "e": [1, 2], "f": ["p", "q"], "g": 3.5,
         "h": b"raw"}, multi_flags={"f"}))
    assert args == ["--a", "--b", "--noc", "--d=x y", "--e=1,2", "--f=p", "--f=q", "--g=3.5",
                    "--h=raw"]
    fv = flags.FlagValues()
    flags.DEFINE_list("e", None, "e", flag_values=fv)
    flags.DEFINE_multi_string("f", None, "f", flag_values=fv)
    flags.DEFINE_boolean("c", True, "c", flag_values=fv)
    fv(["prog", *flags.flag_dict_to_args({"e": ["1", "2"], "f": ["p", "q"], "c": False},
                                         multi_flags={"f"})])
    assert (fv.e, fv.f, fv.c) == (["1", "2"], ["p", "q"], False)


def test_set_default_and_override_value(fv):
    steps = flags.DEFINE_integer("steps", 1, "s", lower_bound=0, flag_values=fv)
    flags.set_default(steps, "4")
    assert fv["steps"].default == 4 and steps.value == 4
    flags.override_value(steps, 9)
    assert steps.value == 9 and not fv["steps"].using_default_value
    flags.set_default(steps, 5)
    assert steps.value == 9
    flags.register_validator("steps", lambda v: v < 100, "too big", flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError, match="too big"):
        flags.override_value(steps, 200)
    with pytest.raises(TypeError, match="FlagHolder"):
        flags.set_default("steps", 3)
    assert steps.value == 200  # absl assigns, then validates


def test_define_rejects_unknown_keywords(fv):
    with pytest.raises(TypeError, match="unexpected"):
        flags.DEFINE_spaceseplist("w", None, "w", flag_values=fv, bogus=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flags.DEFINE_multi_enum("m", None, ["a"], "m", flag_values=fv, module_name="x")
    assert fv.find_module_defining_flag("m") == "x"


def test_flagfile_in_place_nested_and_comments(fv, tmp_path):
    flags.DEFINE_integer("steps", 1, "s", flag_values=fv)
    flags.DEFINE_string("name", "", "n", flag_values=fv)
    flags.DEFINE_multi_string("tag", None, "t", flag_values=fv)
    inner = tmp_path / "inner.flags"
    inner.write_text("--tag=from_inner\n")
    outer = tmp_path / "outer.flags"
    outer.write_text(f"# a comment\n  --steps=5\n// another\n\n--flagfile={inner}\n"
                     f"--name=file name\n--flagfile={outer}\n")
    with pytest.warns(UserWarning, match="circular flagfile"):
        rest = fv(["prog", "--tag=first", f"--flagfile={outer}", "--steps=9", "pos", "--",
                   "--flagfile=x"])
    assert rest == ["prog", "pos", "--flagfile=x"]
    # in place: the file's --steps=5 comes before the later --steps=9
    assert (fv.steps, fv.name, fv.tag) == (9, "file name", ["first", "from_inner"])
    fv(["prog", "--flagfile", str(inner)])
    assert fv.tag == ["from_inner"]
    assert fv.read_flags_from_files(["prog", f"-flagfile={inner}", "x"]) == [
        "prog", "--tag=from_inner", "x"]
    with pytest.raises(flags.CantOpenFlagFileError, match="Unable to open flagfile"):
        fv(["prog", f"--flagfile={tmp_path / 'missing'}"])
    with pytest.raises(flags.Error, match="Missing value for flag --flagfile"):
        fv(["prog", "--flagfile"])


def test_parser_classes_with_define_multi(fv):
    flags.DEFINE_multi(flags.IntegerParser(lower_bound=0), flags.ArgumentSerializer(), "ids",
                       None, "i", flag_values=fv)
    flags.DEFINE(flags.EnumParser(["Fast", "slow"], case_sensitive=False), "speed", "slow", "s",
                 flag_values=fv)
    flags.DEFINE(flags.BooleanParser(), "on", "false", "o", flag_values=fv)
    flags.DEFINE(flags.FloatParser(upper_bound=1.0), "p", "0.5", "p", flag_values=fv)
    flags.DEFINE(flags.ListParser(), "csv", "a,b", "c", flag_values=fv)
    flags.DEFINE(flags.WhitespaceSeparatedListParser(comma_compat=True), "ws", "", "w",
                 flag_values=fv)
    fv(["prog", "--ids=0x10", "--ids=3", "--speed=FAST", "--on=t", "--p=0.25", "--ws=a,b c"])
    assert (fv.ids, fv.speed, fv.on, fv.p, fv.csv, fv.ws) == (
        [16, 3], "Fast", True, 0.25, ["a", "b"], ["a", "b", "c"])
    with pytest.raises(flags.IllegalFlagValueError, match="flag --ids=-1: -1 is not an integer"):
        fv(["prog", "--ids=-1"])
    with pytest.raises(flags.IllegalFlagValueError, match="flag --p=2"):
        fv(["prog", "--p=2"])
    with pytest.raises(ValueError, match="enum_values cannot be empty"):
        flags.EnumParser([])
    assert flags.CsvListSerializer(",").serialize(["x", 1]) == "x,1"


def test_alias_assignment_runs_the_original_validators(fv):
    flags.DEFINE_integer("steps", 5, "s", flag_values=fv)
    flags.DEFINE_alias("n", "steps", flag_values=fv)
    flags.register_validator("steps", lambda v: v < 10, "too many", flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError, match="flag --steps=12: too many"):
        fv.n = 12
    with pytest.raises(flags.IllegalFlagValueError, match="too many"):
        fv(["prog", "--n=13"])
