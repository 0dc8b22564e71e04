import pytest

from connector_base.async_io import AsyncRetryStrategy, empty_result
from connector_base.errors import InvalidOptionError


def test_fixed_delay_waits_the_same_and_stops_after_max_attempts():
    s = AsyncRetryStrategy.fixed_delay(3, 0.5)
    assert [s.backoff_s(a) for a in (1, 2)] == [0.5, 0.5]
    assert s.can_retry(2) and not s.can_retry(3)
    assert s.should_retry(None, RuntimeError("x")) and not s.should_retry([], None)


def test_exponential_backoff_grows_and_is_capped():
    s = AsyncRetryStrategy.exponential_backoff(6, 0.1, 0.5, 2.0)
    assert [round(s.backoff_s(a), 3) for a in range(1, 6)] == [0.1, 0.2, 0.4, 0.5, 0.5]


def test_predicates_on_result_and_exception():
    s = AsyncRetryStrategy.fixed_delay(
        2, 0.0, retry_on_result=empty_result, retry_on_exception=lambda e: isinstance(e, ConnectionError)
    )
    assert s.should_retry([], None) and not s.should_retry([{"a": 1}], None)
    assert s.should_retry(None, ConnectionError()) and not s.should_retry(None, ValueError())


def test_no_retry_is_one_attempt():
    assert not AsyncRetryStrategy.no_retry().can_retry(1)


@pytest.mark.parametrize(
    ("build", "option"),
    [
        (lambda: AsyncRetryStrategy.fixed_delay(0, 0.1), "max_attempts"),
        (lambda: AsyncRetryStrategy.fixed_delay(2, -1.0), "initial_delay_s"),
        (lambda: AsyncRetryStrategy.exponential_backoff(2, 1.0, 0.5), "max_delay_s"),
        (lambda: AsyncRetryStrategy.exponential_backoff(2, 0.1, 1.0, 0.5), "multiplier"),
    ],
)
def test_bad_settings_name_the_option(build, option):
    with pytest.raises(InvalidOptionError, match=option):
        build()
