"""Few-shot prompts of SBSC and its baselines, in one shared turn format.

Format (every method): `### Problem` then the problem text; SBSC writes `### Step k`, a
`Sub-task:` line and one ```` ```python ```` block per turn; the harness stops the model at
```` ```output ````, runs the block and appends ```` ```output\\n...\\n``` ```` with the program's
output or the last lines of its traceback. The final turn writes `### Final answer` and
`\\boxed{...}`. TIR-ToRA writes a rationale and a program for the whole problem; PAL/POT one
program whose printed value is the answer; chain of thought text ending in `\\boxed{...}`.
"""

from __future__ import annotations

# DEVIATION: the exemplars are ours, in the structure the paper describes (Appendix A.6: per
# turn a sub-task and a self-contained program, execution output fed back, boxed final answer);
# the paper's own exemplar texts (AMC/AIME problems from AoPS) are not shipped.

SBSC_SYSTEM = (
    "Solve the problem step by step. At each step state the next sub-task on a `Sub-task:` "
    "line, then write one short, self-contained Python program (sympy is available) that "
    "solves only that sub-task and prints its result. Restate values from earlier steps "
    "inside the program: each program runs on its own. You will see its output (or its "
    "error) before the next step. When the answer is known, write `### Final answer` and "
    "\\boxed{answer}."
)

SBSC_EXEMPLARS = (
    """### Problem
Find the remainder when the sum of the positive divisors of 12 plus the number of positive \
divisors of 30 is divided by 1000.

### Step 1
Sub-task: the sum of the positive divisors of 12.
```python
n = 12
s = sum(d for d in range(1, n + 1) if n % d == 0)
print(s)
```
```output
28
```
### Step 2
Sub-task: the number of positive divisors of 30.
```python
n = 30
t = len([d for d in range(1, n + 1) if n % d == 0])
print(t)
```
```output
8
```
### Step 3
Sub-task: (s + t) mod 1000 with s = 28 and t = 8.
```python
s = 28
t = 8
print((s + t) % 1000)
```
```output
36
```
### Final answer
\\boxed{36}
""",
    """### Problem
What are the last three digits of 3^100 + 7^50?

### Step 1
Sub-task: 3^100 mod 1000.
```python
x = pow(3, 100, 1000)
print(x)
```
```output
1
```
### Step 2
Sub-task: 7^50 mod 1000.
```python
y = pow(7, 50, 1000)
print(y)
```
```output
249
```
### Step 3
Sub-task: (x + y) mod 1000 with x = 1 and y = 249.
```python
x = 1
y = 249
print((x + y) % 1000)
```
```output
250
```
### Final answer
\\boxed{250}
""",
)

TIR_SYSTEM = (
    "Solve the problem by integrating natural-language reasoning with a Python program "
    "(sympy is available). Write a short rationale, then a program that solves the problem "
    "and prints the answer. You will see its output; if it failed, write a corrected program. "
    "Finish with \\boxed{answer}."
)

TIR_EXEMPLARS = (
    """### Problem
Find the remainder when the sum of the positive divisors of 12 plus the number of positive \
divisors of 30 is divided by 1000.

Rationale: compute the divisor sum of 12 and the divisor count of 30 by enumeration, then add.
```python
s = sum(d for d in range(1, 13) if 12 % d == 0)
t = len([d for d in range(1, 31) if 30 % d == 0])
print((s + t) % 1000)
```
```output
36
```
The answer is \\boxed{36}.
""",
    """### Problem
What are the last three digits of 3^100 + 7^50?

Rationale: modular exponentiation gives both tails.
```python
print((pow(3, 100, 1000) + pow(7, 50, 1000)) % 1000)
```
```output
250
```
The answer is \\boxed{250}.
""",
)

PAL_SYSTEM = (
    "Write one Python program that solves the problem and prints the final answer "
    "(an integer) as its last line of output."
)

PAL_EXEMPLARS = (
    """### Problem
Find the remainder when the sum of the positive divisors of 12 plus the number of positive \
divisors of 30 is divided by 1000.

```python
s = sum(d for d in range(1, 13) if 12 % d == 0)
t = len([d for d in range(1, 31) if 30 % d == 0])
answer = (s + t) % 1000
print(answer)
```
""",
)

POT_EXEMPLARS = (
    """### Problem
Find the remainder when the sum of the positive divisors of 12 plus the number of positive \
divisors of 30 is divided by 1000.

```python
divisor_sum_12 = sum(d for d in range(1, 13) if 12 % d == 0)
divisor_count_30 = len([d for d in range(1, 31) if 30 % d == 0])
ans = (divisor_sum_12 + divisor_count_30) % 1000
print(ans)
```
""",
)

COT_SYSTEM = "Solve the problem step by step in words. Finish with \\boxed{answer}."

COT_EXEMPLARS = (
    """### Problem
What is the remainder when 2^10 + 5 is divided by 1000?

2^10 = 1024, so 2^10 + 5 = 1029, whose remainder modulo 1000 is 29.
The answer is \\boxed{29}.
""",
)


def build_prompt(system: str, exemplars: tuple[str, ...], problem: str) -> str:
    """The first prompt of a run: instructions, exemplars, then the problem.

    Args:
        system: Instructions (one paragraph).
        exemplars: Worked examples in the turn format.
        problem: The problem text.

    Returns:
        The prompt, ending with the problem and a blank line.
    """
    if not isinstance(problem, str) or not problem.strip():
        raise ValueError(f"problem={problem!r} is not allowed: must be a non-empty str")
    shots = "\n".join(e.rstrip() + "\n" for e in exemplars)
    return f"{system}\n\n{shots}\n### Problem\n{problem.strip()}\n\n"
