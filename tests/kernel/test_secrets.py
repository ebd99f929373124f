"""Which variables are secrets, what a tool's process gets, what is masked."""

from kernel.secrets import Secrets, is_secret_name

ENV = {"PATH": "/bin", "HOME": "/root", "OPENAI_API_KEY": "sk-openai-0123456789", "MY_KEY": "custom-key-0123456789",
       "GITHUB_TOKEN": "ghp-0123456789", "DB_PASSWORD": "hunter2-longer", "SHORT_TOKEN": "1", "LANG": "C.UTF-8",
       "AWS_SECRET_ACCESS_KEY": "aws-0123456789abcdef"}


def test_names_by_rule_and_by_provider():
    assert is_secret_name("anthropic_api_key") and is_secret_name("X_SECRET") and not is_secret_name("TOKENIZER")
    secrets = Secrets(key_envs=["MY_KEY"], environ=ENV)
    assert secrets.names == {"OPENAI_API_KEY", "MY_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "SHORT_TOKEN",
                             "AWS_SECRET_ACCESS_KEY"}
    env = secrets.tool_environment({"PAGER": "cat"})
    assert env == {"PATH": "/bin", "HOME": "/root", "LANG": "C.UTF-8", "PAGER": "cat"}
    assert "GITHUB_TOKEN" in Secrets(passthrough=["GITHUB_TOKEN"], environ=ENV).tool_environment()


def test_values_are_masked_longest_first_and_short_ones_never():
    env = {"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-and-more", "C_TOKEN": "1"}
    masked = Secrets(environ=env).mask("x abcdefgh-and-more y abcdefgh z 1")
    assert masked == ("x [hermes: the value of $B_TOKEN was masked] y [hermes: the value of $A_TOKEN was masked] z 1")
    assert Secrets(environ={}).mask("nothing to hide") == "nothing to hide"
