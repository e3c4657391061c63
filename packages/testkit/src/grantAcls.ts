import type { AclEntry, Admin } from 'kafkajs';
import { waitFor } from './waitFor.js';

/** An operation an ACL allows (Kafka's names, lower camel case). */
export type AclOperation =
  | 'all'
  | 'read'
  | 'write'
  | 'create'
  | 'delete'
  | 'alter'
  | 'describe'
  | 'describeConfigs'
  | 'alterConfigs'
  | 'idempotentWrite';

/** One resource and what the principal may do with it. */
export interface AclGrant {
  resource: 'topic' | 'group' | 'cluster' | 'transactionalId';
  /** The resource's name; for `cluster` it is always `kafka-cluster`. */
  name: string;
  /** `prefixed` matches every name starting with `name`. @default 'literal' */
  pattern?: 'literal' | 'prefixed';
  operations: readonly AclOperation[];
}

// Kafka protocol values, the same as kafkajs's enums; this package imports kafkajs for types only.
const RESOURCE_TYPES: Record<AclGrant['resource'], number> = { topic: 2, group: 3, cluster: 4, transactionalId: 5 };
const PATTERN_TYPES: Record<NonNullable<AclGrant['pattern']>, number> = { literal: 3, prefixed: 4 };
const OPERATIONS: Record<AclOperation, number> = {
  all: 2,
  read: 3,
  write: 4,
  create: 5,
  delete: 6,
  alter: 7,
  describe: 8,
  describeConfigs: 10,
  alterConfigs: 11,
  idempotentWrite: 12,
};
const ALLOW = 3;

/**
 * Allows `principal` (e.g. `User:app`) the given operations, through `admin` (a client on the
 * broker's super-user PLAINTEXT listener, see {@link startSecuredKafka}), and resolves once the
 * broker lists every new ACL: on a single node that is the state its authorizer checks against.
 *
 * @example
 * await grantAcls(admin, 'User:app', [
 *   { resource: 'topic', name: topic, operations: ['read', 'write', 'describe'] },
 *   { resource: 'group', name: groupId, operations: ['read'] },
 * ]);
 */
export async function grantAcls(
  admin: Admin,
  principal: string,
  grants: readonly AclGrant[],
  { timeoutMs = 10_000 } = {}, // 10 seconds
): Promise<void> {
  if (!/^[A-Za-z]+:.+$/.test(principal)) {
    throw new Error(`grantAcls: principal must be <type>:<name>, e.g. 'User:app', got '${principal}'`);
  }
  const entries: AclEntry[] = grants.flatMap((grant) => {
    if (grant.operations.length === 0) throw new Error(`grantAcls: ${grant.resource} '${grant.name}' has no operations`);
    if (grant.resource === 'cluster' && grant.name !== 'kafka-cluster') {
      throw new Error(`grantAcls: the cluster resource is named 'kafka-cluster', got '${grant.name}'`);
    }
    return grant.operations.map((operation) => ({
      resourceType: RESOURCE_TYPES[grant.resource],
      resourceName: grant.name,
      resourcePatternType: PATTERN_TYPES[grant.pattern ?? 'literal'],
      principal,
      host: '*',
      operation: OPERATIONS[operation],
      permissionType: ALLOW,
    }));
  });
  await admin.createAcls({ acl: entries });
  await waitFor(
    async () => {
      for (const entry of entries) {
        const { resources } = await admin.describeAcls({ ...entry });
        if (resources.every((resource) => resource.acls.length === 0)) return false;
      }
      return true;
    },
    { timeoutMs, intervalMs: 50, message: `the broker to list the ${entries.length} ACLs granted to ${principal}` },
  );
}
