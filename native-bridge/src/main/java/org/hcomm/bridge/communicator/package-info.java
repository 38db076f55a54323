/**
 * The HCCL communicator path (Atlas A2/A3; docs/COMMUNICATOR.md): a {@link org.hcomm.bridge.communicator.Communicator}
 * formed by all its ranks, its streams ({@link org.hcomm.bridge.communicator.CommStream}) that read from a peer's HCCL
 * buffer, and the ACL runtime calls it needs ({@link org.hcomm.bridge.communicator.Acl}: devices, host/device copies).
 */
package org.hcomm.bridge.communicator;
