// The Members card of Settings, for a project's owners and admins (docs/design/roles.md): who belongs to the
// project and with which role (changed in place, or the member removed), the pending invitations (revoked
// here), and the form that invites an email with a role. The server mails the invitation when SMTP is set;
// otherwise it answers the link, shown here to be passed on. Only an owner is offered the owner role: the
// server refuses an admin's change that touches an owner, and says so here if it is tried another way.
import { useState } from 'preact/hooks';
import type { InvitationCreated, Invitations, Members, Role } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { Snippet } from '../ui/install-guide.tsx';
import { ErrorMessage } from '../ui/messages.tsx';
import type { ViewProps } from './view-props.ts';

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner',
  admin: 'Admin',
  viewer: 'Viewer',
};

const ROLE_HINT =
  'Owners and admins change settings, goals, notes, segments, share links and members; only owners make owners. Viewers read.';

function RoleSelect(props: {
  name: string;
  value: Role;
  owner: boolean;
  label: string;
  onChange: (role: Role) => void;
}) {
  const roles: Role[] =
    props.owner || props.value === 'owner' ? ['owner', 'admin', 'viewer'] : ['admin', 'viewer'];
  return (
    <select
      name={props.name}
      aria-label={props.label}
      value={props.value}
      onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value as Role)}
    >
      {roles.map((role) => (
        <option key={role} value={role}>
          {ROLE_TEXT[role]}
        </option>
      ))}
    </select>
  );
}

export function MembersCard({
  api,
  project,
  user,
}: Pick<ViewProps, 'api' | 'project'> & { user?: string | undefined }) {
  const base = `/projects/${encodeURIComponent(project.id)}`;
  const members = useQuery<Members>(api, `${base}/members`);
  const invitations = useQuery<Invitations>(api, `${base}/invitations`);
  const isOwner = project.access.role === 'owner';
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<InvitationCreated[]>([]);
  const [inviteRole, setInviteRole] = useState<Role>('viewer');
  // The last owner can be neither demoted nor removed (the server refuses it): no control offers it.
  const owners = members.data?.members.filter((m) => m.role === 'owner').length ?? 0;
  const fixed = (role: Role) => role === 'owner' && (!isOwner || owners <= 1);

  const act = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
    } catch (err) {
      setError((err as Error).message);
    }
    members.reload();
    invitations.reload();
  };

  return (
    <section class="card" aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <p class="hint">{ROLE_HINT}</p>
      {members.error && <ErrorMessage error={members.error} what="Members" onRetry={members.reload} />}
      {members.data && (
        <div class="table-scroll">
          <table class="plain members-table">
            <caption class="sr-only">Members</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">
                  <span class="sr-only">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.data.members.map((m) => (
                <tr key={m.email}>
                  <td class="member-email">
                    {m.email}
                    {m.email === user && <span class="muted"> (you)</span>}
                    {!m.has_password && <span class="muted"> · no password yet</span>}
                  </td>
                  <td>
                    {fixed(m.role) ? (
                      ROLE_TEXT.owner
                    ) : (
                      <RoleSelect
                        name="role"
                        label={`Role of ${m.email}`}
                        value={m.role}
                        owner={isOwner}
                        onChange={(role) =>
                          act(() =>
                            api.send('PATCH', `${base}/members/${encodeURIComponent(m.email)}`, { role }),
                          )
                        }
                      />
                    )}
                  </td>
                  <td>
                    {!fixed(m.role) && (
                      <button
                        type="button"
                        class="link-button"
                        onClick={() => {
                          if (!confirm(`Remove ${m.email} from ${project.id}?`)) return;
                          void act(() =>
                            api.send('DELETE', `${base}/members/${encodeURIComponent(m.email)}`),
                          );
                        }}
                      >
                        Remove
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {invitations.data && invitations.data.invitations.length > 0 && (
        <div class="table-scroll">
          <table class="plain invitations-table">
            <caption>Pending invitations</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Revoke</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invitations.data.invitations.map((i) => (
                <tr key={i.id}>
                  <td class="member-email">{i.email}</td>
                  <td>{ROLE_TEXT[i.role]}</td>
                  <td>{new Date(i.expires_at).toLocaleDateString()}</td>
                  <td>
                    <button
                      type="button"
                      class="link-button"
                      onClick={() =>
                        act(() => api.send('DELETE', `${base}/invitations/${encodeURIComponent(i.id)}`))
                      }
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {sent.length > 0 && (
        <output class="notice invitations-sent">
          {sent.map((s) =>
            s.emailed ? (
              <p key={s.invitation.id}>
                Invitation mailed to <strong>{s.invitation.email}</strong>.
              </p>
            ) : (
              <div key={s.invitation.id}>
                <p>
                  This server sends no email (SMTP is not set up): pass this link on to{' '}
                  <strong>{s.invitation.email}</strong>. It works once, for 7 days.
                </p>
                <Snippet text={s.link ?? ''} label={`invitation link for ${s.invitation.email}`} />
              </div>
            ),
          )}
        </output>
      )}
      <form
        class="row invite-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const formElement = e.currentTarget as HTMLFormElement;
          const form = new FormData(formElement);
          await act(async () => {
            const made = await api.send<InvitationCreated>('POST', `${base}/invitations`, {
              email: String(form.get('email') ?? '').trim(),
              role: inviteRole,
            });
            setSent((earlier) => [made, ...earlier]);
            formElement.reset();
            setInviteRole('viewer');
          });
        }}
      >
        <label>
          <span>Invite by email</span>
          <input name="email" type="email" required maxLength={254} placeholder="colleague@example.com" />
        </label>
        <div class="field">
          <span aria-hidden="true">Role</span>
          <RoleSelect
            name="role"
            label="Role of the invitee"
            value={inviteRole}
            owner={isOwner}
            onChange={setInviteRole}
          />
        </div>
        <button type="submit" class="primary">
          Invite
        </button>
      </form>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
