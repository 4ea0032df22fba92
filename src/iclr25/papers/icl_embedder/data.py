"""The synthetic attribute world: entities, documents, tasks, training batches, evaluation sets.

- An entity has one value per attribute: an int vector (K,) of value indices. Its document
  (`render`) is its K value words in a shuffled order, so there is no positional shortcut.
- Task k: "relevant" means "shares attribute k". Its instruction is specific (`match colour`,
  `label colour`) or ambiguous (`match item`, `label item`); with an ambiguous instruction only
  in-context examples can say which attribute is meant.
- Retrieval (`kind="retrieval"`): the positive of query q shares exactly attribute k with q; the
  hard negative for attribute j != k shares exactly attribute j, so each negative is the right
  answer under another task. In-batch negatives are on, as the paper's retrieval data.
- Classification (`kind="class"`, the official `symmetric_class` format): the candidates are the
  query's own value words as label texts, the positive its value of attribute k; no in-batch
  negatives (other queries of a batch often share a label).

Attributes `SEEN` are trained on, `HELDOUT` only evaluated. Every function draws from an explicit
`numpy.random.Generator`; the same generator state gives the same texts.

Shapes: B batch, G group, K attributes, V values per attribute, Q queries, N corpus documents.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_choice, check_float, check_int

ATTRIBUTES: tuple[str, ...] = (
    "colour",
    "animal",
    "country",
    "instrument",
    "fruit",
    "sport",
    "profession",
    "vehicle",
)
"""Attribute names; `match {name}` / `label {name}` is the specific instruction of its task."""

VALUES: tuple[tuple[str, ...], ...] = tuple(
    tuple(words.split())
    for words in (
        "red blue green yellow purple pink brown black white grey gold silver violet navy teal "
        "beige maroon cyan magenta crimson",
        "dog cat horse cow sheep goat pig rabbit mouse lion tiger bear wolf fox deer zebra monkey "
        "camel eagle shark",
        "france spain italy germany japan china india brazil canada mexico egypt kenya peru chile "
        "norway sweden poland greece turkey russia",
        "piano guitar violin flute drum trumpet cello harp banjo clarinet saxophone organ tuba "
        "oboe accordion ukulele harmonica mandolin trombone bagpipe",
        "apple banana cherry grape lemon lime mango melon peach pear plum orange kiwi papaya "
        "apricot coconut fig guava lychee strawberry",
        "football tennis golf hockey rugby cricket baseball basketball volleyball boxing cycling "
        "rowing skiing surfing swimming running archery fencing judo karate",
        "doctor nurse teacher lawyer farmer pilot chef baker judge engineer artist writer dentist "
        "plumber soldier sailor painter singer dancer actor",
        "car bus truck train bicycle motorcycle boat ship plane helicopter tram taxi van scooter "
        "tractor rocket canoe yacht submarine jeep",
    )
)
"""`VALUES[a]`: the 20 value words of attribute a, each a single common English word, unique
across all attributes."""

INSTRUCTION_WORDS: tuple[str, ...] = ("match", "label", "item")
"""The words of the instructions besides the attribute names."""

KINDS: tuple[str, ...] = ("retrieval", "class")
"""Task types: retrieval (in-batch negatives) and the official `symmetric_class` (none)."""

FORMS: tuple[str, ...] = ("specific", "ambiguous")
"""Instruction forms: naming the attribute, or `item` (only examples say which)."""

SEEN: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
"""Attributes whose tasks are trained on."""

HELDOUT: tuple[int, ...] = (6, 7)
"""Attributes whose tasks are only evaluated."""


@dataclass(frozen=True)
class World:
    """The attribute world: the first `n_attributes` of `ATTRIBUTES`, each with its first
    `n_values` words of `VALUES`.

    Args:
        n_attributes: K, 2 to 8.
        n_values: V, 2 to 20.
        heldout: Attributes only evaluated on (distinct, in [0, K), at least one left seen).
    """

    n_attributes: int = 8
    n_values: int = 20
    heldout: tuple[int, ...] = HELDOUT

    def __post_init__(self) -> None:
        k = check_int("n_attributes", self.n_attributes, 2, len(ATTRIBUTES))
        check_int("n_values", self.n_values, 2, len(VALUES[0]))
        if not isinstance(self.heldout, tuple | list):
            raise TypeError(f"heldout={self.heldout!r} is not allowed: must be a tuple of ints")
        held = tuple(check_int(f"heldout[{i}]", h, 0, k - 1) for i, h in enumerate(self.heldout))
        if len(set(held)) != len(held) or len(held) >= k:
            raise ValueError(
                f"heldout={self.heldout!r} is not allowed: must be distinct attributes in "
                f"[0, {k - 1}] leaving at least one seen"
            )
        object.__setattr__(self, "heldout", held)

    @property
    def attributes(self) -> tuple[str, ...]:
        """The K attribute names."""
        return ATTRIBUTES[: self.n_attributes]

    @property
    def seen(self) -> tuple[int, ...]:
        """The attributes not held out, in order."""
        return tuple(a for a in range(self.n_attributes) if a not in self.heldout)

    @property
    def words(self) -> tuple[str, ...]:
        """All K * V value words, attribute by attribute."""
        return tuple(w for a in range(self.n_attributes) for w in VALUES[a][: self.n_values])

    def word(self, attribute: int, value: int) -> str:
        """The word of `value` of `attribute`."""
        return VALUES[attribute][value]

    def entities(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """`n` entities with independent uniform values, shape (n, K) int64."""
        return rng.integers(0, self.n_values, size=(n, self.n_attributes))


def render(entity: np.ndarray | Sequence[int], rng: np.random.Generator) -> str:
    """The document of `entity`: its value words in a random order, joined by spaces.

    Args:
        entity: (K,) value indices; entry a is a value of attribute a (K <= 8, values < 20).
        rng: Draws the word order.
    """
    e = np.asarray(entity)
    if e.ndim != 1 or not 1 <= len(e) <= len(ATTRIBUTES) or e.dtype.kind not in "iu":
        raise ValueError(f"entity={entity!r} is not allowed: must be 1 to 8 value indices")
    if e.min() < 0 or e.max() >= len(VALUES[0]):
        raise ValueError(f"entity={entity!r} is not allowed: values must lie in [0, 19]")
    return " ".join(VALUES[a][e[a]] for a in rng.permutation(len(e)))


def instruction(kind: str, task: int, form: str) -> str:
    """The instruction of a task: `match|label {attribute}` (specific) or `match|label item`."""
    check_choice("kind", kind, KINDS)
    check_choice("form", form, FORMS)
    task = check_int("task", task, 0, len(ATTRIBUTES) - 1)
    verb = "match" if kind == "retrieval" else "label"
    return f"{verb} {ATTRIBUTES[task] if form == 'specific' else 'item'}"


def _differ(base: np.ndarray, n_values: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform values that differ from `base` entry by entry (same shape)."""
    return (base + rng.integers(1, n_values, size=base.shape)) % n_values


def _check_sizes(world: World, batch_size: int, group_size: int, *, avoid: bool) -> tuple[int, int]:
    """(B, G) checked: B >= 1 (<= V - 1 when false negatives are avoided), G in [1, K]."""
    b = check_int("batch_size", batch_size, 1)
    g = check_int("group_size", group_size, 1, world.n_attributes)
    if avoid and b > world.n_values - 1:
        raise ValueError(
            f"batch_size={batch_size} is not allowed with avoid_false_negatives=True: must be "
            f"<= n_values - 1 = {world.n_values - 1} (distinct query values, one left over)"
        )
    return b, g


@dataclass(frozen=True)
class Batch:
    """One training batch: B queries of one task and form, each with a group of G passages.

    Attributes:
        kind, task, form: The batch's task type, attribute and instruction form.
        queries: (B,) query documents.
        instructions: (B,) the instruction of each query (one per batch, as one per dataset).
        passages: (B * G,) group i is `passages[i * G:(i + 1) * G]`, its positive first.
        answers: (B,) each query's value word of attribute `task` (the class label).
        query_entities: (B, K) int.
        passage_entities: (B * G, K) int for retrieval; None for "class" (label words).
        group_size: G.
        in_batch_negatives: Whether the loss scores every passage of the batch (retrieval) or
            only the query's own group (class).
    """

    kind: str
    task: int
    form: str
    queries: list[str]
    instructions: list[str]
    passages: list[str]
    answers: list[str]
    query_entities: np.ndarray
    passage_entities: np.ndarray | None
    group_size: int
    in_batch_negatives: bool

    @property
    def pool(self) -> list[tuple[str, str]]:
        """The official example pool: (query, positive) of every row, pair index = row index."""
        return list(zip(self.queries, self.passages[:: self.group_size], strict=True))


def task_batch(
    world: World,
    *,
    kind: str,
    task: int,
    form: str,
    rng: np.random.Generator,
    batch_size: int = 16,
    group_size: int = 8,
    avoid_false_negatives: bool = True,
) -> Batch:
    """A batch of one task: every query with its positive and G - 1 hard negatives.

    Retrieval: the positive shares exactly attribute `task` with the query; each hard negative
    shares exactly one other attribute (G - 1 of them drawn without replacement, random order).
    With `avoid_false_negatives` the B queries get distinct values of attribute `task` and every
    hard negative's value of it is drawn from the values no query has, so no passage of another
    query is relevant to a query (in-batch negatives are never false). Without it, queries and
    negatives are drawn independently, so another query's passage shares the query's value
    with probability about 1/V, as on real data (the official-like variant).

    Class: the passages are label words, the query's value of `task` first, then its values of
    G - 1 other attributes; `avoid_false_negatives` is unused (no in-batch negatives).

    Args:
        world: The world.
        kind: "retrieval" or "class".
        task: The attribute k in [0, K).
        form: "specific" or "ambiguous".
        rng: Draws everything.
        batch_size: B >= 1; at most V - 1 for retrieval with `avoid_false_negatives`.
        group_size: G in [1, K].
        avoid_false_negatives: See above.
    """
    check_choice("kind", kind, KINDS)
    k, v = world.n_attributes, world.n_values
    task = check_int("task", task, 0, k - 1)
    inst = instruction(kind, task, form)
    retrieval = kind == "retrieval"
    avoid = retrieval and bool(avoid_false_negatives)
    b, g = _check_sizes(world, batch_size, group_size, avoid=avoid)
    q = world.entities(b, rng)
    # DEVIATION: with `avoid_false_negatives` (default) no in-batch passage of another query is
    # relevant to a query; with V = 20 values the collision rate (about 1/V per passage) would
    # otherwise be far above real data's. False gives the official-like independent draws.
    if avoid:
        q[:, task] = rng.choice(v, size=b, replace=False)
    others = np.array([a for a in range(k) if a != task], dtype=np.int64)
    neg = np.stack([rng.permutation(others)[: g - 1] for _ in range(b)]).reshape(b, g - 1)
    shared = np.concatenate([np.full((b, 1), task), neg], axis=1)  # (B, G)
    rows = np.arange(b)[:, None]
    if retrieval:
        p = _differ(np.repeat(q[:, None, :], g, axis=1), v, rng)  # (B, G, K)
        p[rows, np.arange(g)[None, :], shared] = q[rows, shared]
        if avoid:
            unused = np.setdiff1d(np.arange(v), q[:, task])
            p[:, 1:, task] = rng.choice(unused, size=(b, g - 1))
        p_ent = p.reshape(b * g, k)
        passages = [render(e, rng) for e in p_ent]
    else:
        p_ent = None
        passages = [world.word(a, q[i, a]) for i in range(b) for a in shared[i]]
    return Batch(
        kind=kind,
        task=task,
        form=form,
        queries=[render(e, rng) for e in q],
        instructions=[inst] * b,
        passages=passages,
        answers=[world.word(task, x) for x in q[:, task]],
        query_entities=q,
        passage_entities=p_ent,
        group_size=g,
        in_batch_negatives=retrieval,
    )


def training_stream(
    world: World,
    *,
    rng: np.random.Generator,
    tasks: Sequence[int] | None = None,
    class_fraction: float = 0.25,
    p_ambiguous: float = 0.5,
    batch_size: int = 16,
    group_size: int = 8,
    avoid_false_negatives: bool = True,
) -> Iterator[Batch]:
    """An endless stream of batches, each of one (kind, task, form) drawn afresh.

    Args:
        world: The world.
        rng: Draws every batch.
        tasks: Attributes to draw tasks from (uniformly); default `world.seen`.
        class_fraction: Probability that a batch is "class" rather than "retrieval".
        p_ambiguous: Probability that a batch's instruction is ambiguous.
        batch_size, group_size, avoid_false_negatives: As `task_batch`.
    """
    tasks = world.seen if tasks is None else tuple(tasks)
    if not tasks:
        raise ValueError("tasks=() is not allowed: give at least one attribute")
    tasks = tuple(
        check_int(f"tasks[{i}]", t, 0, world.n_attributes - 1) for i, t in enumerate(tasks)
    )
    class_fraction = check_float("class_fraction", class_fraction, 0, 1)
    p_ambiguous = check_float("p_ambiguous", p_ambiguous, 0, 1)
    _check_sizes(world, batch_size, group_size, avoid=bool(avoid_false_negatives))
    # DEVIATION: an endless synthetic stream (no epochs, no drop-last); the official code
    # shuffles each file's rows, cuts them into same-dataset batches and shuffles the batches.

    def stream() -> Iterator[Batch]:
        while True:
            kind = "class" if rng.random() < class_fraction else "retrieval"
            task = tasks[int(rng.integers(len(tasks)))]
            form = "ambiguous" if rng.random() < p_ambiguous else "specific"
            yield task_batch(
                world,
                kind=kind,
                task=task,
                form=form,
                rng=rng,
                batch_size=batch_size,
                group_size=group_size,
                avoid_false_negatives=avoid_false_negatives,
            )

    return stream()


@dataclass(frozen=True)
class EvalSet:
    """A filtered retrieval and classification test set.

    Attributes:
        queries: (Q,) query documents.
        query_entities: (Q, K) int.
        tasks: (Q,) the attribute of each query's task.
        corpus: (N,) documents: every query's group (its positive, then one hard negative per
            other attribute, in attribute order), then the random entities.
        corpus_entities: (N, K) int.
        pos: (Q,) index of each query's positive in the corpus.
        exclude: (Q, N) bool; True where a document other than the positive shares the query's
            value of its task attribute (also relevant: filtered out of the ranking).
        class_candidates: (Q, K) label words; candidate j is the query's value word of
            attribute j, so the right label of query i is at index `tasks[i]`.
    """

    queries: list[str]
    query_entities: np.ndarray
    tasks: np.ndarray
    corpus: list[str]
    corpus_entities: np.ndarray
    pos: np.ndarray
    exclude: np.ndarray
    class_candidates: list[list[str]]


def eval_set(
    world: World,
    *,
    tasks: Sequence[int],
    n_per_task: int,
    n_random: int,
    rng: np.random.Generator,
) -> EvalSet:
    """Queries of the given tasks, their groups and random documents as one corpus.

    Every query brings its positive and K - 1 hard negatives (one per other attribute), so with
    an ambiguous instruction and no examples a model that ranks the group first is at 1/K.

    Args:
        world: The world.
        tasks: Attributes (distinct, in [0, K)); queries are grouped by task in this order.
        n_per_task: Queries per task (>= 1).
        n_random: Random entities added to the corpus (>= 0).
        rng: Draws everything.
    """
    k, v = world.n_attributes, world.n_values
    tasks = tuple(check_int(f"tasks[{i}]", t, 0, k - 1) for i, t in enumerate(tasks))
    if not tasks or len(set(tasks)) != len(tasks):
        raise ValueError(f"tasks={tasks!r} is not allowed: must be distinct attributes, >= 1")
    n_per_task = check_int("n_per_task", n_per_task, 1)
    n_random = check_int("n_random", n_random, 0)
    task_of = np.repeat(np.array(tasks, dtype=np.int64), n_per_task)
    n_q = len(task_of)
    q = world.entities(n_q, rng)
    # shared attribute of each group member: the task, then the other attributes in order
    shared = np.array([[t, *(a for a in range(k) if a != t)] for t in task_of])  # (Q, K)
    groups = _differ(np.repeat(q[:, None, :], k, axis=1), v, rng)  # (Q, K, K)
    rows = np.arange(n_q)[:, None]
    groups[rows, np.arange(k)[None, :], shared] = q[rows, shared]
    ent = np.concatenate([groups.reshape(n_q * k, k), world.entities(n_random, rng)])
    pos = np.arange(n_q) * k
    target = q[np.arange(n_q), task_of]
    exclude = target[:, None] == ent[:, task_of].T  # (Q, N)
    exclude[np.arange(n_q), pos] = False
    return EvalSet(
        queries=[render(e, rng) for e in q],
        query_entities=q,
        tasks=task_of,
        corpus=[render(e, rng) for e in ent],
        corpus_entities=ent,
        pos=pos,
        exclude=exclude,
        class_candidates=[[world.word(a, x) for a, x in enumerate(e)] for e in q],
    )


def fixed_examples(
    world: World,
    *,
    task: int,
    rng: np.random.Generator,
    n: int = 3,
    kind: str = "retrieval",
    avoid: np.ndarray | None = None,
) -> list[tuple[str, str]]:
    """The fixed (query, response) examples of one task, the same for every test query.

    Retrieval: the response is a document sharing exactly attribute `task` with the query (a
    positive). Class: the response is the query's value word of `task` (the label). The
    instruction is not part of an example here: it is the query's own when formatted.

    Args:
        world: The world.
        task: The attribute in [0, K).
        rng: Draws the examples (draw once per seed; reuse for every query and method).
        n: Number of examples (>= 1).
        kind: "retrieval" or "class".
        avoid: (M, K) entities no example query may be (pass the test queries'
            `EvalSet.query_entities` to keep the examples disjoint from the test set).
    """
    check_choice("kind", kind, KINDS)
    k, v = world.n_attributes, world.n_values
    task = check_int("task", task, 0, k - 1)
    n = check_int("n", n, 1)
    # DEVIATION: the official evaluation prepends each MTEB / AIR-Bench task's shipped list of
    # 1 to 8 examples (mostly 3 or 5); here n (default 3) are drawn per task and seed.
    banned = set()
    if avoid is not None:
        a = np.asarray(avoid)
        if a.ndim != 2 or a.shape[1] != k:
            raise ValueError(f"avoid has shape {a.shape}: must be (M, {k}) entities")
        banned = {tuple(r) for r in a.tolist()}
    q = world.entities(n, rng)
    while clash := [i for i, r in enumerate(q.tolist()) if tuple(r) in banned]:
        q[clash] = world.entities(len(clash), rng)
    if kind == "class":
        responses = [world.word(task, x) for x in q[:, task]]
    else:
        p = _differ(q, v, rng)
        p[:, task] = q[:, task]
        responses = [render(e, rng) for e in p]
    return [(render(e, rng), r) for e, r in zip(q, responses, strict=True)]
