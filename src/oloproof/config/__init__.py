"""Project configuration: ``oloproof.yaml`` and its overrides."""

from oloproof.config._load import (
    CONFIG_NAME,
    Project,
    apply_settings,
    load_project,
    parse_override,
    parse_overrides,
)
from oloproof.config._project import ProjectConfig, RagSettings, StageTimeouts, SystemSettings, TaskRunnerSettings

__all__ = [
    "CONFIG_NAME",
    "Project",
    "ProjectConfig",
    "RagSettings",
    "StageTimeouts",
    "SystemSettings",
    "TaskRunnerSettings",
    "apply_settings",
    "load_project",
    "parse_override",
    "parse_overrides",
]
