"""The admin key: from a file, from the environment, or generated; never silently absent."""

import pytest

from str_ocr_client.http import ADMIN_HEADER
from str_ocr_server.admin import ADMIN_KEY_ENV, ADMIN_KEY_FILE_ENV, admin_key, restriction_args


def test_a_key_file_wins_over_the_environment_and_loses_its_newline(tmp_path):
    path = tmp_path / "key"
    path.write_text("from-a-secret\n")
    assert admin_key({ADMIN_KEY_FILE_ENV: str(path), ADMIN_KEY_ENV: "from-env"}) == "from-a-secret"
    assert admin_key({ADMIN_KEY_ENV: "from-env"}) == "from-env"


def test_without_either_a_long_random_key_is_made_each_time():
    first, second = admin_key({}), admin_key({})
    assert first != second and len(first) >= 40


@pytest.mark.parametrize("content, message", [(None, "cannot read"), ("  \n", "is empty")])
def test_an_unreadable_or_empty_key_file_stops_the_launcher(tmp_path, content, message):
    path = tmp_path / "key"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit, match=message):
        admin_key({ADMIN_KEY_FILE_ENV: str(path)})


def test_the_restriction_covers_both_protocols():
    args = restriction_args("k")
    assert [a.split("=", 1)[0] for a in args] == ["--grpc-restricted-protocol", "--http-restricted-api"]
    assert all(a.endswith(f":{ADMIN_HEADER}=k") and "model-repository" in a for a in args)
