"""What the commands share in reading their options."""

from __future__ import annotations

import json
from typing import Any


def json_option(text: str, flag: str) -> Any:
    """The JSON value `flag` was given; ValueError naming the flag where it is none (json's message names only a line
    and a column). train and shaped-sim keep their own copy: they are the jobs' code, and a change to it reruns them."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{flag}: not valid JSON ({err})") from None
