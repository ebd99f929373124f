"""Which variables are secrets, what a tool's process gets, what is masked."""

from hermes.host.config import Config, is_secret_name
from kernel.secrets import Secrets
from plugins.tool_args import tool_environment

ENV = {"PATH": "/bin", "HOME": "/root", "OPENAI_API_KEY": "sk-openai-0123456789", "MY_KEY": "custom-key-0123456789",
       "GITHUB_TOKEN": "ghp-0123456789", "DB_PASSWORD": "hunter2-longer", "SHORT_TOKEN": "1", "LANG": "C.UTF-8",
       "AWS_SECRET_ACCESS_KEY": "aws-0123456789abcdef"}


def test_names_by_rule_and_by_provider(monkeypatch):
    assert is_secret_name("anthropic_api_key") and is_secret_name("X_SECRET") and not is_secret_name("TOKENIZER")
    for name in list(__import__("os").environ):
        monkeypatch.delenv(name)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    names = Config({"provider_options": {"api_key_env": "MY_KEY"}, "fallback_providers": [{"api_key_env": "FB"}]}).key_envs()
    assert names == {"OPENAI_API_KEY", "MY_KEY", "FB", "GITHUB_TOKEN", "DB_PASSWORD", "SHORT_TOKEN", "AWS_SECRET_ACCESS_KEY"}
    secrets = Secrets(names, environ=ENV)
    env = tool_environment(secrets, {"PAGER": "cat"})
    assert env == {"PATH": "/bin", "HOME": "/root", "LANG": "C.UTF-8", "PAGER": "cat"}
    assert "GITHUB_TOKEN" in tool_environment(Secrets(names, passthrough=["GITHUB_TOKEN"], environ=ENV))


def test_values_are_masked_longest_first_and_short_ones_never():
    env = {"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-and-more", "C_TOKEN": "1"}
    masked = Secrets(env, environ=env).mask("x abcdefgh-and-more y abcdefgh z 1")
    assert masked == ("x [hermes: the value of $B_TOKEN was masked] y [hermes: the value of $A_TOKEN was masked] z 1")
    assert Secrets(environ={}).mask("nothing to hide") == "nothing to hide"
