/**
 * Who a session acts for at the cells, as gitlab-shell's `commandargs.Shell`: the id of the SSH key
 * the user logged in with, or (certificate login) the GitLab username the certificate names. The
 * internal API gets `key_id` or `username` accordingly.
 */
export type ShellActor = { keyId: string } | { username: string };

export function actorFields(actor: ShellActor): { key_id: string } | { username: string } {
  return 'keyId' in actor ? { key_id: actor.keyId } : { username: actor.username };
}

/** For log lines: `key_id` or `gl_username`. */
export function actorLog(actor: ShellActor): Record<string, string> {
  return 'keyId' in actor ? { key_id: actor.keyId } : { gl_username: actor.username };
}
