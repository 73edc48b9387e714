"""The secret scan tells real key shapes from BFCL's identifiers, paths and placeholders (issue
26, item 4): every real BFCL task but one (a random hex value) is imported, and keys of every
known format, and random tokens of the lengths keys have, are still caught."""

from __future__ import annotations

import json
import random
import string

from epbench.core.credentials import (
    has_key_shape,
    looks_like_secret,
    made_of_words,
    secret_hex,
    secret_tokens,
)
from epbench.generator.checks import secret
from epbench.generator.importers.bfcl import _task, workload
from epbench.generator.importers.bfcl_source import CATEGORIES, Source
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "bfcl" / "bfcl_eval-2026.3.23-data.zip"
BASE62 = string.ascii_letters + string.digits
URLSAFE = BASE62 + "-_"

# Keys in the formats their issuers document (made here: none was ever issued).
KNOWN_FORMATS = [
    "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lN5pR7tV9xZ1bD3fH5",  # OpenAI project key
    "sk-ant-api03-" + "x7Gq2LmN9pR4sT6vW8yZ1bD3fH5jK7mN9pQ2sU4wY6aC8eG0iK2mO4qS6uW8",
    "sk_live_" + "51H8xQ2eZvKYlo2C9a8Fb7Gc6Hd5Ie4Jf3Kg2Lh1",  # Stripe secret key
    "ghp_" + "aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX5",  # GitHub classic token (36 after ghp_)
    "github_pat_11ABCDEFG0" + "aB3cD5eF7gH9iJ1kL3mN5o_" + "P7qR9sT1uV3wX5yZ7aB9cD1eF3gH5",
    "glpat-" + "xY7zA9bC1dE3fG5hJ7kL",  # GitLab personal access token
    "AKIA" + "Z7Q3M9X2K5W8P4R6",  # AWS access key id
    "AIza" + "SyB7xQ2eZvKYlo2C9a8Fb7Gc6Hd5Ie4Jf3K",  # Google API key
    "xoxb-" + "1234567890-1234567890123-aB3cD5eF7gH9iJ1kL3mN5oP7",  # Slack bot token
    "hf_" + "aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3w",  # Hugging Face token
    "gsk_" + "aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX5yZ7aB9cD1eF3gH5",  # Groq
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "Bearer " + "9f8e7d6c5b4a39281706AbCdEf",
    "Bearer " + "mF_9.B5f-4.1JqM",  # RFC 6750's example token, padded below to 16
    "3f5a9c2e7b1d4086a2c4e6f8b0d2e4f6",  # Azure OpenAI: 32 lower-case hex digits
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS's documented secret key shape
]
KNOWN_FORMATS[13] += "xY7zQ"

# Strings from BFCL's live categories the scan used to take for keys.
BFCL_STRINGS = [
    "Flights_4_SearchRoundtripFlights",
    "SQLCompletionAnalyzer_makeProposalsFromObject",
    "DB2ViewBaseDepCache_prepareObjectsStatement",
    "Http2TestExchangeImpl_sendResponseHeaders",
    "MacDmgBundler_prepareDMGSetupScript",
    "bom_api_BomApi_export_project_as_cyclone_dx",
    "badge_api_BadgeApi_get_project_policy_violations_badge1",
    "BadgeApi_get_project_vulnerabilities_badge1",
    "https://192.168.1.67/sedgeapi/v1/cisco-nir/api/api/telemetry/flowrules/interfaceInfo",
    "https://example.com/wp-content/uploads/2016/11/Allain-John-Baclayo.jpg",
    "Authorization: Bearer your_api_key_here",
]


def test_keys_of_every_known_format_are_caught():
    for key in KNOWN_FORMATS:
        assert looks_like_secret(key), key
        assert looks_like_secret(f"the key is {key}, keep it safe"), key
        assert secret.scan({"tasks": [{"conversation": [f"use {key}"]}]}, "w.yaml"), key


def test_random_tokens_of_key_lengths_are_caught_all_but_one_in_ten_thousand():
    rng = random.Random(26)
    missed = words = total = 0
    for alphabet in (BASE62, URLSAFE):
        for length in (32, 40, 48, 64):
            for _ in range(2500):
                token = "".join(rng.choices(alphabet, k=length))
                total += 1
                missed += not looks_like_secret(token)
                words += made_of_words(token)
    assert total == 20_000
    assert missed <= total // 10_000, f"{missed} of {total} random tokens not caught"
    assert words <= total // 10_000, f"{words} of {total} random tokens taken for words"


def test_bfcls_identifiers_paths_and_placeholders_are_not_keys():
    for text in BFCL_STRINGS:
        assert not looks_like_secret(text), text
    assert made_of_words("Flights_4_SearchRoundtripFlights")
    assert not made_of_words("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


def test_every_real_bfcl_task_passes_the_secret_scan_but_a_random_hex_value():
    """The one BFCL entry still left out (simple_java_77) has a 64-digit hex "encrypted
    password" in its question: hex keys of 32 to 64 digits exist (Azure's are 32), and nothing
    in a hex run tells a digest from a key unless a key name says so."""
    source = Source(FIXTURE)
    held = []
    for category in CATEGORIES:
        entries = {e.id: e for e in source.entries(category)}
        doc = workload(category, list(entries.values()), source.version)
        assert not secret.scan(doc, f"bfcl-{category}.yaml")
        for item in doc["source"].get("excluded", []):
            if "credential" not in item["reason"]:
                continue
            task, _ = _task(entries[item["id"]], category)
            text = json.dumps(task, ensure_ascii=False)
            assert secret_hex(text) and not secret_tokens(text) and not has_key_shape(text)
            held.append(item["id"])
    assert held == ["simple_java_77"]
