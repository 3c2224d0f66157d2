#pragma once
// What the Compare tests share: asking a CompareView for runs and waiting for its loader.

#include "ui/compare/CompareView.h"

#include <QList>
#include <QTest>

namespace hearth::test {

// Asks for the runs and waits until the loader (off the GUI thread) has delivered them.
inline void load(hearth::ui::CompareView& view, const QList<qint64>& ids)
{
    view.setRuns(ids);
    QVERIFY(view.isLoading());
    QTRY_VERIFY(!view.isLoading());
}

}  // namespace hearth::test
