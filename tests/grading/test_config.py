"""grading_config.yaml is validated in one place: a bad file names the key and the problem."""

from __future__ import annotations

import pytest
import yaml

from seqlab import contract
from seqlab.cli import main
from seqlab.config import ConfigError, load_config, parse_config
from seqlab.paths import CONFIG_PATH


def _raw():
    return yaml.safe_load(CONFIG_PATH.read_text())


def test_course_config_is_valid():
    config = load_config()
    assert set(config.functions) == set(__import__("seqlab.contract", fromlist=["x"]).FUNCTIONS)
    assert config.tolerance("torch.float32").rtol > config.tolerance("torch.float64").rtol
    assert config.rules("attention.scaled_dot_product_attention").forbidden_match(
        "torch.nn.functional.scaled_dot_product_attention"
    )


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["functions"]["optimizers.adam"].__setitem__("points", "five"), "functions.optimizers.adam.points"),
        (lambda c: c["functions"]["optimizers.adam"].__setitem__("points", -1), "functions.optimizers.adam.points"),
        (lambda c: c["functions"].pop("rnn.rnn_bptt"), "no points for rnn.rnn_bptt"),
        (lambda c: c["functions"].__setitem__("rnn.rnn_magic", {"points": 1}), "functions.rnn.rnn_magic"),
        (lambda c: c["tolerances"]["float32"].pop("why"), "tolerances.float32.why"),
        (lambda c: c["limits"].__setitem__("call_timeout_s", 0), "limits.call_timeout_s"),
        (lambda c: c["limits"].__setitem__("wall", 3), "limits.wall"),
        (
            lambda c: c["functions"]["selective_scan.linear_scan"].__setitem__("complexity_points", 99),
            "complexity_points",
        ),
        (lambda c: c["functions"]["optimizers.sgd"].__setitem__("forbidden", "torch.*"), "forbidden"),
        (lambda c: c.__setitem__("version", 2), "version"),
        (lambda c: c["functions"]["optimizers.sgd"].__setitem__("test_weights", {"*": 0}), "test_weights"),
        (lambda c: c["functions"]["optimizers.sgd"].__setitem__("test_weights", ["*"]), "test_weights"),
    ],
)
def test_bad_values_name_the_key(edit, message):
    raw = _raw()
    edit(raw)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        parse_config(raw, source="grading_config.yaml")


def test_bad_yaml_on_the_command_line_is_a_message_not_a_traceback(tmp_path, capsys):
    bad = tmp_path / "grading_config.yaml"
    bad.write_text("version: 1\nfunctions: [unclosed\n")
    assert main(["config", str(bad)]) == 2
    stderr = capsys.readouterr().err
    assert "not valid YAML" in stderr and "line" in stderr
    assert "Traceback" not in stderr
    assert main(["config", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_test_weights_from_the_config_share_a_functions_points():
    from seqlab.grading.plugin import TestRecord
    from seqlab.grading.scoring import score_records

    raw = _raw()
    raw["functions"]["optimizers.sgd"]["test_weights"] = {"*lr=0.3*": 3}
    config = parse_config(raw)
    records = [
        TestRecord("a", "optimizers.sgd", "matches SGD [float64]", 1.0, False, passed=True),
        TestRecord("b", "optimizers.sgd", "matches SGD, lr=0.3", 1.0, False, passed=False),
    ]
    scored = {t.name: t for t in score_records(records, config)}
    assert scored["optimizers.sgd: matches SGD, lr=0.3"].max_score == pytest.approx(1.5)  # 3 of 4 weights of 2 points
    assert scored["optimizers.sgd: matches SGD [float64]"].score == pytest.approx(0.5)


# --- the config agrees with the graders -------------------------------------------------------


def test_every_weight_pattern_of_the_course_matches_a_grader_test():
    from seqlab.config import check_test_patterns
    from seqlab.grader_index import titles_by_function

    titles = titles_by_function()
    assert set(titles) == set(__import__("seqlab.contract", fromlist=["x"]).FUNCTIONS)
    check_test_patterns(load_config(), titles)  # raises on an unmatched pattern


def test_a_weight_pattern_that_matches_no_title_is_refused():
    from seqlab.config import check_test_patterns

    raw = _raw()
    raw["functions"]["optimizers.sgd"]["test_weights"] = {"matches SGD*": 2, "state['lr']*": 1}
    titles = {"optimizers.sgd": ["matches SGD [float64]", "state['lr'] is kept"]}
    with pytest.raises(ConfigError) as info:
        check_test_patterns(parse_config(raw), titles)
    message = str(info.value)
    assert "functions.optimizers.sgd.test_weights[\"state['lr']*\"]" in message
    assert "matches no grader test" in message and "write [[] for a literal [" in message
    assert "matches SGD*" not in message  # the pattern that does match is not blamed


def test_config_check_on_the_command_line(tmp_path, capsys):
    assert main(["config", "--check"]) == 0
    stdout = capsys.readouterr().out
    assert f"valid ({len(contract.FUNCTIONS)} functions" in stdout and "total" not in stdout
    raw = _raw()
    raw["functions"]["optimizers.adam"]["test_weights"] = {"matches torch.optim.AdamW*": 2}
    reworded = tmp_path / "grading_config.yaml"
    reworded.write_text(yaml.safe_dump(raw))
    assert main(["config", "--check", str(reworded)]) == 2
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr
    assert "optimizers.adam.test_weights['matches torch.optim.AdamW*']: matches no grader test" in stderr
