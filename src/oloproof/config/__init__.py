"""Project configuration: ``oloproof.yaml`` and its overrides."""

from oloproof.config._load import (
    CONFIG_NAME,
    Overrides,
    Project,
    apply_settings,
    load_project,
    parse_override,
    parse_overrides,
)
from oloproof.config._project import (
    AgentSettings,
    ProjectConfig,
    RagSettings,
    StageTimeouts,
    SystemSettings,
    TaskRunnerSettings,
)
from oloproof.config._yaml import YamlMapping, YamlValue

__all__ = [
    "CONFIG_NAME",
    "AgentSettings",
    "Overrides",
    "Project",
    "ProjectConfig",
    "RagSettings",
    "StageTimeouts",
    "SystemSettings",
    "TaskRunnerSettings",
    "YamlMapping",
    "YamlValue",
    "apply_settings",
    "load_project",
    "parse_override",
    "parse_overrides",
]
