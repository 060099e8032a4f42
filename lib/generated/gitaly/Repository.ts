// Original file: protos/shared.proto


/**
 * A repository inside one of Gitaly's storages.
 */
export interface Repository {
  'storage_name'?: (string);
  'relative_path'?: (string);
  /**
   * Quarantine directories set by hooks; empty otherwise.
   */
  'git_object_directory'?: (string);
  'git_alternate_object_directories'?: (string)[];
  /**
   * "project-<id>", passed to Rails by hooks.
   */
  'gl_repository'?: (string);
  /**
   * Full path of the project, e.g. "my-company/my-project".
   */
  'gl_project_path'?: (string);
}

/**
 * A repository inside one of Gitaly's storages.
 */
export interface Repository__Output {
  'storage_name'?: (string);
  'relative_path'?: (string);
  /**
   * Quarantine directories set by hooks; empty otherwise.
   */
  'git_object_directory'?: (string);
  'git_alternate_object_directories'?: (string)[];
  /**
   * "project-<id>", passed to Rails by hooks.
   */
  'gl_repository'?: (string);
  /**
   * Full path of the project, e.g. "my-company/my-project".
   */
  'gl_project_path'?: (string);
}
