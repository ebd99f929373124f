"""The fallback policy, called directly with constructed failures."""

import time
from types import SimpleNamespace


from hermes.host.config import Config
from kernel.types import Compress, GiveUp, ProviderConfig, ProviderError, ProviderFailure, RefreshCredentials, Retry, SwitchProvider
from plugins import fallback

PRIMARY = ProviderConfig(model="gpt", base_url="http://127.0.0.1:1/v1", api_mode="chat_completions")
FB1 = {"provider": "anthropic", "model": "claude", "base_url": "http://127.0.0.1:2", "api_key_env": "FB_KEY", "api_mode": "anthropic_messages"}
FB2 = {"model": "gpt-r", "base_url": "http://127.0.0.1:3/v1", "api_mode": "codex_responses"}


def agent(fallbacks=(FB1, FB2), **settings):
    data = {"fallback_providers": list(fallbacks), "agent": {"retry_base_delay": 0.5, **settings}}
    return SimpleNamespace(config=Config(data), state={}, primary=PRIMARY, provider_config=PRIMARY)


def failure(reason, config=PRIMARY, attempt=1, retry_after=None, delta_shown=False, turn_state=None, history=None):
    err = ProviderError("boom", reason=reason, retry_after=retry_after, status_code=500 if reason == "server" else None)
    return ProviderFailure(err, config, PRIMARY, attempt, delta_shown, history or [(config.label(), str(err))], {} if turn_state is None else turn_state)


def test_transient_retries_with_backoff_then_moves_on():
    a, ts = agent(), {}
    assert [fallback.on_provider_error(failure("server", attempt=n, turn_state=ts), a) for n in (1, 2, 3)] == [Retry(0.5), Retry(1.0), Retry(2.0)]
    decision = fallback.on_provider_error(failure("transport", attempt=4, turn_state=ts), a)
    assert decision == SwitchProvider(fallback.provider_config(FB1))


def test_retry_after_honoured_and_capped():
    a = agent(retry_max_delay=30)
    assert fallback.on_provider_error(failure("server", retry_after=4), a) == Retry(4)
    assert fallback.on_provider_error(failure("server", retry_after=500), a) == Retry(30)
    assert fallback.on_provider_error(failure("server", attempt=10), agent(api_max_retries=20)) == Retry(30)


def test_rate_limit_and_billing_move_on_at_once():
    a = agent()
    assert fallback.on_provider_error(failure("rate_limit"), a) == SwitchProvider(fallback.provider_config(FB1))
    assert fallback.on_provider_error(failure("billing"), agent()) == SwitchProvider(fallback.provider_config(FB1))


def test_rate_limit_without_fallback_waits_billing_gives_up():
    assert fallback.on_provider_error(failure("rate_limit", retry_after=2), agent(fallbacks=())) == Retry(2)
    assert isinstance(fallback.on_provider_error(failure("billing"), agent(fallbacks=())), GiveUp)


def test_auth_refreshes_once_then_moves_on():
    a, ts = agent(), {}
    assert fallback.on_provider_error(failure("auth", turn_state=ts), a) == RefreshCredentials()
    assert fallback.on_provider_error(failure("auth", attempt=2, turn_state=ts), a) == SwitchProvider(fallback.provider_config(FB1))


def test_context_overflow_compresses():
    assert fallback.on_provider_error(failure("context_overflow"), agent()) == Compress()


def test_chain_in_order_then_give_up_listing_each():
    a, ts = agent(), {}
    fb1, fb2 = fallback.provider_config(FB1), fallback.provider_config(FB2)
    assert fallback.on_provider_error(failure("bad_request", turn_state=ts), a) == SwitchProvider(fb1)
    assert fallback.on_provider_error(failure("config", config=fb1, turn_state=ts), a) == SwitchProvider(fb2)
    history = [(PRIMARY.label(), "bad_request: nope"), (fb1.label(), "config: set FB_KEY"), (fb2.label(), "server (500): down")]
    decision = fallback.on_provider_error(failure("server", config=fb2, attempt=4, turn_state=ts, history=history), a)
    assert isinstance(decision, GiveUp)
    assert decision.message.startswith("every provider failed")
    for label, why in history:
        assert f"{label}: {why}" in decision.message


def test_a_stream_cut_after_text_was_shown_is_retried_like_any_failure():
    decision = fallback.on_provider_error(failure("transport", delta_shown=True), agent())
    assert isinstance(decision, Retry)  # the front end marks where the new answer starts


def test_cooldown_after_rate_limit_doubles_and_resets():
    a = agent(fallback_cooldown=10, fallback_cooldown_max=25)
    fb1 = fallback.provider_config(FB1)
    assert fallback.choose_provider(PRIMARY, a) is None
    fallback.on_provider_error(failure("rate_limit"), a)
    assert fallback.choose_provider(PRIMARY, a) == fb1
    left = a.state["fallback"]["cooldown_until"] - time.monotonic()
    assert 9 < left <= 10
    fallback.on_provider_error(failure("rate_limit"), a)  # consecutive: doubles
    assert 19 < a.state["fallback"]["cooldown_until"] - time.monotonic() <= 20
    fallback.on_provider_error(failure("rate_limit"), a)  # capped
    assert 24 < a.state["fallback"]["cooldown_until"] - time.monotonic() <= 25
    fallback.on_provider_error(failure("rate_limit", retry_after=3), a)  # the server's word wins
    assert 2 < a.state["fallback"]["cooldown_until"] - time.monotonic() <= 3
    a.state["fallback"]["cooldown_until"] = time.monotonic() - 1  # cooldown over
    assert fallback.choose_provider(PRIMARY, a) is None
    fallback.post_api_request(a)  # the primary answered
    assert a.state["fallback"]["streak"] == 0


def test_during_cooldown_primary_is_skipped_in_chain():
    a = agent()
    fallback.on_provider_error(failure("rate_limit"), a)
    fb1, fb2 = fallback.provider_config(FB1), fallback.provider_config(FB2)
    decision = fallback.on_provider_error(failure("bad_request", config=fb1), a)
    assert decision == SwitchProvider(fb2)


def test_entries_without_model_are_skipped():
    a = agent(fallbacks=({"provider": "anthropic"}, FB2))
    assert fallback.chain(a, PRIMARY) == [PRIMARY, fallback.provider_config(FB2)]


def test_cooling_primary_is_tried_when_every_fallback_failed():
    a, ts = agent(fallbacks=(FB1,)), {}
    fallback.on_provider_error(failure("rate_limit", turn_state={}), a)  # an earlier turn
    fb1 = fallback.provider_config(FB1)
    assert fallback.choose_provider(PRIMARY, a) == fb1
    assert fallback.on_provider_error(failure("bad_request", config=fb1, turn_state=ts), a) == SwitchProvider(PRIMARY)
    assert isinstance(fallback.on_provider_error(failure("bad_request", turn_state=ts), a), GiveUp)


def test_literal_keys_dropped_key_env_spelling_accepted(caplog):
    entry = {"model": "claude", "api_mode": "anthropic_messages", "api_key": "sk-literal-SECRET", "key_env": "TEAM_KEY"}
    (_, pconf) = fallback.chain(agent(fallbacks=(entry,)), PRIMARY)
    assert pconf.api_key_env == "TEAM_KEY"
    assert "SECRET" not in repr(pconf) and pconf.options() == {}
    assert "api_key" in caplog.text and "SECRET" not in caplog.text
