// @tally/state-store: the state Tally keeps besides the record log and the warehouse: the dashboard's
// users, sessions, sign-in links, share links, project settings, goals and funnels, and the gateway's
// refusal counts, in LMDB under TALLY_DATA_DIR or in Redis. Only re-exports.

export * from './alerts.ts';
export * from './invitations.ts';
export * from './lmdb-store.ts';
export * from './open.ts';
export * from './projects.ts';
export * from './redis-store.ts';
export * from './refusal-counts.ts';
export * from './report-subscriptions.ts';
export * from './secrets.ts';
export * from './share-links.ts';
export * from './sign-in-failures.ts';
export * from './state-store.ts';
export * from './users.ts';
