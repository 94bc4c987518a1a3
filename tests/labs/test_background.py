"""The parent's background work: one intra-op thread, its own CPU time, its failure its own."""

import time

import pytest

from seqlab.labs.background import Background


def test_it_runs_torch_on_one_thread_and_counts_only_its_own_cpu():
    import torch

    seen = {}

    def work():
        seen["threads"] = torch.get_num_threads()
        started = time.thread_time()
        while time.thread_time() - started < 0.05:
            pass

    main_before = time.thread_time()
    job = Background("test-background", work).join()
    assert seen["threads"] == 1
    assert 0.05 <= job.cpu_s < 0.5
    assert time.thread_time() - main_before < 0.05  # the main thread only waited


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_failure_still_leaves_its_time_and_ends_the_thread():
    def work():
        raise RuntimeError("the reference failed")

    job = Background("test-background-fails", work).join()
    assert not job.thread.is_alive() and job.cpu_s >= 0.0
