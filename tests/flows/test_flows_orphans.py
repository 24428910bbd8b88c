"""Which RUNNING flow runs are orphans: recorded on this host, by a process that is gone."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from oloproof.flows._orphans import is_orphan, process_alive, project_tag, where_running


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_dead_process_on_this_host_is_an_orphan():
    host = socket.gethostname()
    pid = _dead_pid()
    assert not process_alive(pid)
    assert is_orphan(f"{host}:{pid}", host)


def test_live_processes_other_hosts_and_unrecorded_runs_are_left_alone():
    host = socket.gethostname()
    assert where_running() == f"{host}:{os.getpid()}"
    assert not is_orphan(where_running(), host)  # this very process
    assert not is_orphan(f"{host}:1", host, alive=lambda pid: True)
    assert not is_orphan(f"other-host:{_dead_pid()}", host)
    for recorded in (None, "", "no-pid", f"{host}:", f"{host}:12a"):
        assert not is_orphan(recorded, host, alive=lambda pid: False), recorded


def test_a_host_name_with_colons_keeps_its_pid_apart():
    assert is_orphan("fe80::1:4242", "fe80::1", alive=lambda pid: pid == 4242) is False
    assert is_orphan("fe80::1:4242", "fe80::1", alive=lambda pid: False) is True


def test_the_project_tag_is_its_folder_hashed(tmp_path):
    assert project_tag(str(tmp_path)) == project_tag(str(tmp_path / "x" / ".."))
    assert project_tag(str(tmp_path)) != project_tag(str(tmp_path / "other"))
    assert project_tag(str(tmp_path)).startswith("project:") and len(project_tag(str(tmp_path))) == 20
