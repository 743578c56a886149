// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model_stub.c - stands in for model.c until the mm and proc layers link:
 * target_create(TARGET_MODEL) then fails with -ENOSYS. src/target/meson.build
 * picks model.c instead as soon as src/mm/meson.build sets vml_mm_ready.
 */
#include "target/target.h"

const bool target_model_available = false;
const struct target_ops target_model_ops;

struct vml_mm *target_model_mm(const struct target *t)
{
	(void)t;
	return NULL;
}
