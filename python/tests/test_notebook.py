"""docs/python.ipynb runs from top to bottom (its code cells, in order, in one namespace; no
Jupyter needed)."""

import json


def test_the_example_notebook_runs():
    with open("docs/python.ipynb") as file:
        notebook = json.load(file)
    cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert len(cells) >= 4
    namespace: dict = {}
    for cell in cells:
        source = "".join(cell["source"])
        exec(compile(source, "docs/python.ipynb", "exec"), namespace)  # noqa: S102
    assert namespace["totals"]["t_lower_s"] > 0
    frame = namespace["frame"]
    assert list(frame["workload.batch"]) == [1, 8, 64, 256, 512]
    # Decode steps read the weights once per step whatever the batch, so tokens per second grow
    # with the batch while the step stays memory-bound.
    assert frame["tokens_per_s"].is_monotonic_increasing
