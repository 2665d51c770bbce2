"""Running a triplet extractor over passages: a cache, batching and bounded concurrency.

Any ``Runnable`` extractor works (the LLM one of :mod:`.triplets`, the offline one of
:mod:`.offline`, or the user's): :func:`extract_texts` calls it only for passages whose
triplets are not cached, and reports failures per passage instead of raising. The cache
and the identity of an extractor that keys it are in :mod:`.extraction_cache`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from langchain_core.exceptions import OutputParserException
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.ingest.extraction_cache import TripletCache, extractor_name
from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem

if TYPE_CHECKING:
    from langchain_graphrag_milvus.ingest.report import IngestReport

__all__ = ["TripletCache", "extract_texts", "extract_each", "extract_records", "extractor_name"]


def extract_each(
    texts: Sequence[str],
    extractor: Runnable[Any, Any],
    ctx: Any,
    *,
    strict: bool,
    what: str,
    failed: Callable[[int, Problem], None],
    ids: Sequence[str],
    titles: Sequence[str | None] | None = None,
) -> list[tuple[int, Any, dict[str, int], bool]]:
    """Run ``extractor`` over ``texts`` (cache first); the successes as ``(position, raw, usage, cached)``.

    ``ctx`` gives the extraction cache and concurrency (an ``IngestContext``). A failure is
    raised if ``strict``, else handed to ``failed`` with its position and a :class:`Problem`
    naming the passage id and ``what`` failed (e.g. ``"triplet extraction"``).
    """
    results = extract_texts(
        list(texts), extractor, ctx.extraction_cache, max_concurrency=ctx.extraction_concurrency, titles=titles
    )
    done: list[tuple[int, Any, dict[str, int], bool]] = []
    for i, (raw, usage, cached, error) in enumerate(results):
        if error is None:
            done.append((i, raw, usage, cached))
        elif strict:
            raise error
        else:
            failed(i, Problem(ids[i], f"{what} failed: {type(error).__name__}: {error}"))
    return done


def extract_records(
    records: Sequence[PassageRecord],
    extractor: Runnable[Any, Any],
    ctx: Any,
    report: IngestReport,
    *,
    strict: bool,
    what: str,
) -> list[tuple[PassageRecord, Any, dict[str, int], bool]]:
    """:func:`extract_each` over records (their titles too); a failed record is marked for a retry.

    A failure sets the record's ``extraction_failed`` (the next ingest extracts it again),
    is counted in the report and named as a problem.
    """

    def failed(i: int, problem: Problem) -> None:
        records[i].extraction_failed = True
        report.extraction_failures += 1
        report._problem(problem)

    titles = [t if isinstance(t := r.metadata.get("title"), str) else None for r in records]
    done = extract_each([r.text for r in records], extractor, ctx, strict=strict, what=what, failed=failed,
                        ids=[r.id for r in records], titles=titles)  # fmt: skip
    return [(records[i], raw, usage, cached) for i, raw, usage, cached in done]


def _batch_extract(extractor: Any, texts: list[str], titles: dict[str, str]) -> list[Any]:
    """Results of an extractor with ``extract_many`` (one batched call; a failure fails all)."""
    items = [{"text": t, "title": titles[t]} if t in titles else t for t in texts]
    try:
        return list(extractor.extract_many(items))
    except Exception as exc:  # reported per passage, never raised here
        return [exc for _ in texts]


def extract_texts(
    texts: Sequence[str],
    extractor: Runnable[str, Any],
    cache: TripletCache,
    *,
    max_concurrency: int,
    titles: Sequence[str | None] | None = None,
) -> list[tuple[list[Any] | None, dict[str, int], bool, BaseException | None]]:
    """Triplets for each text: ``(triplets, usage, from_cache, error)``.

    The model is called only for texts not in the cache, at most ``max_concurrency`` at a
    time; failures are returned, not raised. An extractor with an ``extract_many`` method
    (the offline one) gets all texts in one call, with their ``titles`` (a title changes
    the cache key); others get the text alone.
    """
    name = extractor_name(extractor)
    batched = callable(getattr(extractor, "extract_many", None))
    given = dict(zip(texts, titles)) if (batched and titles is not None) else {}
    title_of = {t: v for t, v in given.items() if v}
    keys = [TripletCache.key(name, t if t not in title_of else f"{title_of[t]}\x1e{t}") for t in texts]
    cached = cache.get_many(list(dict.fromkeys(keys)))
    todo = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in cached))
    fresh: dict[str, tuple[list[Any] | None, dict[str, int], BaseException | None]] = {}
    if todo and batched:
        answers = _batch_extract(extractor, todo, title_of)
        fresh = _fresh_results(todo, answers)
        key_of = dict(zip(texts, keys))
        cache.put_many({key_of[t]: v[0] for t, v in fresh.items() if v[0] is not None})
    elif todo:
        # one invoke per text in a bounded pool (``batch(return_exceptions=True)`` of a
        # runnable with retries mixes up results in langchain-core 1.7, so it is not used)
        def call(text: str) -> Any:
            try:
                return extractor.invoke(text)
            except Exception as exc:  # reported per passage, never raised here
                return exc

        with ThreadPoolExecutor(max_workers=max(1, min(max_concurrency, len(todo)))) as pool:
            answers = list(pool.map(call, todo))
        fresh = _fresh_results(todo, answers)
        cache.put_many({TripletCache.key(name, t): v[0] for t, v in fresh.items() if v[0] is not None})
    return _in_order(texts, keys, cached, fresh)


def _fresh_results(
    todo: Sequence[str], answers: Sequence[Any]
) -> dict[str, tuple[list[Any] | None, dict[str, int], BaseException | None]]:
    fresh: dict[str, tuple[list[Any] | None, dict[str, int], BaseException | None]] = {}
    for text, answer in zip(todo, answers):
        if isinstance(answer, BaseException):
            fresh[text] = (None, {}, answer)
        elif isinstance(answer, dict):
            fresh[text] = (list(answer.get("triplets") or []), dict(answer.get("usage") or {}), None)
        elif isinstance(answer, list):
            fresh[text] = (answer, {}, None)
        else:
            fresh[text] = (None, {}, OutputParserException(f"extractor returned {type(answer).__name__}"))
    return fresh


def _in_order(
    texts: Sequence[str],
    keys: Sequence[str],
    cached: dict[str, list[Any]],
    fresh: dict[str, tuple[list[Any] | None, dict[str, int], BaseException | None]],
) -> list[tuple[list[Any] | None, dict[str, int], bool, BaseException | None]]:
    out: list[tuple[list[Any] | None, dict[str, int], bool, BaseException | None]] = []
    seen: set[str] = set()
    for text, key in zip(texts, keys):
        if key in cached:
            out.append((cached[key], {}, True, None))
        else:
            triplets, usage, error = fresh[text]
            out.append((triplets, usage if text not in seen else {}, False, error))  # count usage once
            seen.add(text)
    return out
