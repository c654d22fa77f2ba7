"""Runs a pipeline DAG's tasks as Vertex does: every task whose upstream tasks are done starts.

kfp.local runs a DAG's tasks one after another in a topological order and caps a ParallelFor at
two iterations at once. Vertex starts each task as soon as its upstream tasks end, and runs a
loop's iterations at once up to the loop's `parallelism`. `install` puts `run_dag` in place of
both kfp.local orchestrators (nested DAGs, loop iterations and sub-pipelines included) and lifts
the loop cap to `max_parallel`; how many task processes really run at once is bounded by
`task_handler` (`--max-parallel`). Everything else (conditions, loops, exit handlers, outputs) is
kfp.local's own code, called per task.
"""

from __future__ import annotations

import concurrent.futures
import logging
from typing import Any

_max_parallel = 1


def install(max_parallel: int) -> None:
    from kfp.local.orchestrator import dag_orchestrator, enhanced_dag_orchestrator

    global _max_parallel
    _max_parallel = max(1, max_parallel)
    enhanced_dag_orchestrator.run_enhanced_dag = run_dag
    dag_orchestrator.run_dag = run_dag
    enhanced_dag_orchestrator.ParallelExecutor.__init__ = _loop_executor_init  # type: ignore[method-assign]


def _loop_executor_init(self: Any, max_workers: int | None = None) -> None:
    """A loop's iterations at once: its `parallelism`, else up to `max_parallel`."""
    self.conservative_max = _max_parallel
    self.max_workers = min(max_workers or _max_parallel, _max_parallel)


def run_dag(
    pipeline_resource_name: str,
    dag_component_spec: Any,
    executors: dict[str, Any],
    components: dict[str, Any],
    dag_arguments: dict[str, Any],
    pipeline_root: str,
    runner: Any,
    unique_pipeline_id: str,
    fail_stack: list[str],
    parent_io_store: Any = None,
) -> tuple[dict[str, Any], Any]:
    """kfp.local's `run_enhanced_dag`, with the body's ready tasks run at once."""
    from kfp.local import io, status
    from kfp.local.orchestrator.orchestrator_utils import OrchestratorUtils

    arguments = OrchestratorUtils.join_user_inputs_and_defaults(
        dag_arguments=dag_arguments, dag_inputs_spec=dag_component_spec.input_definitions
    )
    io_store = io.IOStore(parent=parent_io_store)
    for name, value in arguments.items():
        io_store.put_parent_input(name, value)
    common = {
        "pipeline_resource_name": pipeline_resource_name,
        "components": components,
        "executors": executors,
        "io_store": io_store,
        "pipeline_root": pipeline_root,
        "runner": runner,
        "unique_pipeline_id": unique_pipeline_id,
        "fail_stack": fail_stack,
    }
    body, exits = _split_exit_tasks(dict(dag_component_spec.dag.tasks.items()))
    body_failed = _run_body(body, common)
    if body_failed and not exits:
        return {}, status.Status.FAILURE
    exit_failed = not all(_run_task(name, spec, common) for name, spec in exits.items())
    if body_failed or exit_failed:
        return {}, status.Status.FAILURE
    outputs = OrchestratorUtils.get_dag_outputs(
        dag_outputs_spec=dag_component_spec.dag.outputs, io_store=io_store
    )
    return outputs, status.Status.SUCCESS


def _split_exit_tasks(tasks: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(body tasks, exit-handler tasks): an exit task runs after the body, whatever its end."""
    from kfp.local.orchestrator import enhanced_dag_orchestrator as enhanced

    body, exits = {}, {}
    for name, spec in tasks.items():
        is_exit = _runs_after_all(spec) and enhanced._has_task_final_status_input(spec)
        (exits if is_exit else body)[name] = spec
    return body, exits


def _runs_after_all(spec: Any) -> bool:
    from kfp.pipeline_spec import pipeline_spec_pb2

    strategy = pipeline_spec_pb2.PipelineTaskSpec.TriggerPolicy.TriggerStrategy
    return spec.trigger_policy.strategy == strategy.ALL_UPSTREAM_TASKS_COMPLETED


def _run_body(body: dict[str, Any], common: dict[str, Any]) -> bool:
    """Starts every task whose upstream tasks ended; returns whether any task failed."""
    pending, ended, failed = dict(body), set(), set()
    running: dict[concurrent.futures.Future[bool], str] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(body))) as pool:
        while pending or running:
            for name in [n for n, spec in pending.items() if _upstream_ended(spec, body, ended)]:
                spec = pending.pop(name)
                if _blocked_by_failure(spec, failed):
                    _skip_after_failure(name, spec, common)
                    ended.add(name)
                    failed.add(name)
                    continue
                running[pool.submit(_run_task, name, spec, common)] = name
            if not running:
                if pending and not any(_upstream_ended(s, body, ended) for s in pending.values()):
                    raise RuntimeError(f"tasks {sorted(pending)} wait on each other")
                continue  # a skip may have made more tasks ready
            done, _ = concurrent.futures.wait(running, return_when="FIRST_COMPLETED")
            for future in done:
                name = running.pop(future)
                ended.add(name)
                if not future.result():
                    failed.add(name)
    return bool(failed)


def _upstream_ended(spec: Any, body: dict[str, Any], ended: set[str]) -> bool:
    return all(dep in ended or dep not in body for dep in spec.dependent_tasks)


def _blocked_by_failure(spec: Any, failed: set[str]) -> bool:
    return any(dep in failed for dep in spec.dependent_tasks) and not _runs_after_all(spec)


def _skip_after_failure(name: str, spec: Any, common: dict[str, Any]) -> None:
    logging.info(f"Skipping task {name}: an upstream task failed.")
    common["io_store"].put_task_status(name, "FAILED")


def _run_task(name: str, spec: Any, common: dict[str, Any]) -> bool:
    """One body or exit task (a leaf, a sub-DAG, a condition or a loop); True when it succeeded."""
    from kfp.local import status
    from kfp.local.orchestrator import enhanced_dag_orchestrator as enhanced

    io_store = common["io_store"]
    if spec.trigger_policy.condition and not enhanced.ConditionEvaluator.evaluate_condition(
        spec.trigger_policy.condition, io_store
    ):
        logging.info(f"Skipping conditional task {name} (condition evaluated to False)")
        return True
    if spec.WhichOneof("iterator") and enhanced._has_valid_iterator(spec):
        loop_failed = enhanced._run_parallel_for_task(
            task_name=name,
            task_spec=spec,
            parallel_executor=enhanced.ParallelExecutor(),
            **common,
        )
        return not loop_failed
    try:
        outputs, task_status = enhanced.execute_task(task_name=name, task_spec=spec, **common)
    except Exception:  # a sub-DAG that cannot be built fails this task, not the whole run
        logging.exception(f"Task {name} failed")
        task_status, outputs = status.Status.FAILURE, {}
    succeeded = task_status == status.Status.SUCCESS
    io_store.put_task_status(name, "SUCCEEDED" if succeeded else "FAILED")
    if not succeeded:
        common["fail_stack"].append(name)
        return False
    for key, output in outputs.items():
        io_store.put_task_output(name, key, output)
    return True
