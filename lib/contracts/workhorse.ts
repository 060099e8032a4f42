/**
 * @file Workhorse pre-authorization of the SSH tunnel routes: the bridge (Workhorse) `POST`s the
 * tunnel's path to Rails with no body; a 200 in this content type authorizes it with the JSON below
 * (Rails' `Gitlab::Workhorse.git_http_ok`), anything else is passed back to the client.
 */
import type { GitalyRepositoryJson } from './internal-api.js';

/** The content type of an authorizing answer, exactly (no charset parameter). */
export const WORKHORSE_CONTENT_TYPE = 'application/vnd.gitlab-workhorse+json';

/** Rails' authorizing answer (the fields GitLab sends for the SSH routes). */
export interface WorkhorsePreauthJson {
  GL_ID: string;
  GL_REPOSITORY: string;
  GL_USERNAME: string;
  ShowAllRefs?: boolean;
  NeedAudit?: boolean;
  Repository: GitalyRepositoryJson;
  GitConfigOptions: string[];
  GitalyServer: {
    /** `tcp://host:port`, `tls://…` or `unix:…`. */
    address: string;
    token: string;
    /** Sent to Gitaly as gRPC metadata (`user_id`, `username`, `remote_ip`). */
    call_metadata: Record<string, string>;
  };
  ProjectID?: number;
  RootNamespaceID?: number;
  /** Git over HTTP with a CI job token (`gitlab-ci-token`): the job's id, as a string. */
  GlBuildID?: string;
  /** The scoped user of a linked identity (Rails' `Gitlab::Auth::Identity`), as a string. */
  GlScopedUserID?: string;
}
