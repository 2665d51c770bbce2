"""The triplet extraction prompt, entity types and output schema as parameters."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel

from langchain_graphrag_milvus.ingest.triplets import DEFAULT_ENTITY_TYPES, create_llm_triplet_extractor, extractor_name


class RecordingChat(FakeListChatModel):
    """A fake chat model that keeps every prompt it was sent."""

    prompts: list[list[BaseMessage]] = []

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.prompts.append(list(messages))
        return super()._call(messages, *args, **kwargs)


class Fact(BaseModel):
    subject: str
    predicate: str
    object: str


class Facts(BaseModel):
    relations: list[Fact]


class StructuredChat(RecordingChat):
    """Structured output: answers with an instance of the schema it was asked for."""

    schemas: list[type] = []

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
        self.schemas.append(schema)

        def answer(prompt_value: Any) -> dict[str, Any]:
            self.prompts.append(prompt_value.to_messages())
            parsed = schema(relations=[Fact(subject="Euler", predicate="studied under", object="Johann Bernoulli")])
            return {"parsed": parsed, "raw": AIMessage(""), "parsing_error": None}

        return RunnableLambda(answer)


ANSWER = '{"named_entities": ["Euler", "Basel"], "triples": [["Euler", "was born in", "Basel"]]}'


def test_custom_entity_types_reach_the_prompt() -> None:
    llm = RecordingChat(responses=[ANSWER], prompts=[])
    extractor = create_llm_triplet_extractor(llm, entity_types=["mathematician", "university"], structured=False)
    assert extractor.invoke("Euler was born in Basel.")["triplets"] == [["Euler", "was born in", "Basel"]]
    last = str(llm.prompts[-1][-1].content)
    assert "(mathematician, university)" in last and "Euler was born in Basel." in last
    assert "people, places" not in last
    # the one-shot example is rendered with the same types
    assert "(mathematician, university)" in str(llm.prompts[-1][0].content)


def test_default_prompt_names_the_default_types_and_keeps_its_cache_namespace() -> None:
    llm = RecordingChat(responses=[ANSWER], prompts=[])
    default = create_llm_triplet_extractor(llm, structured=False)
    default.invoke("Euler was born in Basel.")
    assert f"({', '.join(DEFAULT_ENTITY_TYPES)})" in str(llm.prompts[-1][-1].content)
    assert extractor_name(default) == "graph_triplet_extraction[RecordingChat]"
    typed = create_llm_triplet_extractor(llm, entity_types=["person"], structured=False)
    other = create_llm_triplet_extractor(llm, entity_types=["city"], structured=False)
    names = {extractor_name(default), extractor_name(typed), extractor_name(other)}
    assert len(names) == 3  # another prompt never reads the default prompt's cached triplets


def test_custom_prompt_template() -> None:
    llm = RecordingChat(responses=['{"triples": [["a", "b", "c"]]}'], prompts=[])
    extractor = create_llm_triplet_extractor(
        llm,
        prompt='Only {entity_types}! JSON {{"triples": ...}} from: {passage}',
        entity_types=["x"],
        structured=False,
    )
    assert extractor.invoke("P")["triplets"] == [["a", "b", "c"]]
    sent = [str(m.content) for m in llm.prompts[-1]]
    assert sent[-1] == 'Only x! JSON {"triples": ...} from: P'
    assert sent[0].startswith("Only x! JSON") and "Radio City" in sent[0]  # the example, in the same template
    no_example = create_llm_triplet_extractor(llm, prompt="{passage}", examples=[], structured=False)
    llm.responses, llm.i = ['{"triples": []}'], 0
    no_example.invoke("Q")
    assert [str(m.content) for m in llm.prompts[-1]] == ["Q"]


@pytest.mark.parametrize("kwargs", [{"prompt": "no placeholder"}, {"entity_types": []}, {"entity_types": ["ok", " "]}])
def test_bad_prompt_parameters_raise(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        create_llm_triplet_extractor(RecordingChat(responses=["x"], prompts=[]), **kwargs)


def test_custom_schema_for_structured_output() -> None:
    llm = StructuredChat(responses=["unused"], prompts=[], schemas=[])
    extractor = create_llm_triplet_extractor(llm, schema=Facts, entity_types=["person"])
    out = extractor.invoke("Euler studied under Johann Bernoulli.")
    assert llm.schemas == [Facts]
    assert out["triplets"] == [["Euler", "studied under", "Johann Bernoulli"]]
    assert len(llm.prompts[-1]) == 1  # no default few-shot example in another schema's format
    assert "(person)" in str(llm.prompts[-1][0].content)


MARKDOWN = """## Using `keyring`

pip can use the system trust store:

```
$ pip install --use-feature=truststore keyring
```

See `init.defaultBranch` and **sha256** checks."""


def test_the_model_reads_prose_not_markup_and_the_stored_text_is_unchanged() -> None:
    """Issue 24, item 2 on the LLM path: the prompt gets the text spaCy gets (markup and code syntax out)."""
    llm = RecordingChat(responses=[ANSWER, ANSWER], prompts=[])
    extractor = create_llm_triplet_extractor(llm, structured=False)
    extractor.invoke(MARKDOWN)
    sent = str(llm.prompts[-1][-1].content)
    assert "Using keyring." in sent and "init.defaultBranch" in sent and "sha256" in sent  # names kept
    for syntax in ("```", "## ", "$ pip", "`keyring`", "**"):
        assert syntax not in sent
    extractor.invoke("Euler was born in Basel.")  # plain prose is sent as it is
    assert "Euler was born in Basel." in str(llm.prompts[-1][-1].content)

